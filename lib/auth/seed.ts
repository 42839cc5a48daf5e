import { createProject } from "@/lib/projects";
import type { Sql } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { countUsers, insertApiToken, insertUser } from "@/lib/store/users";
import { generateApiToken, hashApiToken } from "./tokens";
import { lockForTransaction } from "@/lib/store/advisory-locks";

/** Arbitrary constant key: only one process seeds an empty store. */
const SEED_LOCK_KEY = 727_274_002;

export interface DemoSeed {
  token: string;
  project: Project;
}

/**
 * On an empty store, creates the demo user, an API token for it and a demo project. Returns the
 * plain token (it is stored hashed, so this is the only time it exists) or null when the store
 * already has users.
 */
export async function seedDemoIfEmpty(db: Sql): Promise<DemoSeed | null> {
  const token = generateApiToken();
  const user = await db.transaction(async (tx) => {
    await lockForTransaction(tx, SEED_LOCK_KEY);
    if ((await countUsers(tx)) > 0) return null;
    const demo = await insertUser(tx, { email: "demo@example.com", name: "Demo user" });
    await insertApiToken(tx, { userId: demo.id, tokenHash: hashApiToken(token), label: "demo" });
    return demo;
  });
  if (!user) return null;
  // No sandbox yet: start-up code runs in its own bundle (instrumentation), and long-lived
  // objects it creates would carry that bundle's copies of the classes the routes check
  // errors against. The demo project gets its sandbox on first use, from a route.
  const project = await createProject(db, user.id, "Demo app", { sandbox: false });
  return { token, project };
}
