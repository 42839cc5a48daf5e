// Initialises an embedded database directory and exits (see initializePgliteApart in pglite.ts):
// initdb grows PGlite's WebAssembly memory to several hundred MB, which only a process's exit
// gives back.
import { PGlite } from "@electric-sql/pglite";

const db = await PGlite.create(process.argv[2]);
await db.close();
