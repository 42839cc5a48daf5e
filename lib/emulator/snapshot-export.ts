import { zipSync, type Zippable } from "fflate";
import { z } from "zod";
import { userTableNames } from "./cli-data";
import type { EmulatorContext } from "./context";
import { requireKey } from "./deployment";
import { EmulatorError, readQuery } from "./http";
import type { StoredFile } from "./storage";
import { toExportJson } from "./snapshot-json";
import { findSnapshotExport, upsertSnapshotExport } from "./snapshot-store";
import { listDocuments, tableOfDocumentId, type DocumentWrite, type EmulatorDeployment } from "./store";

/**
 * `npx convex export`: a snapshot ZIP of the deployment in Convex's layout
 * (crates/exports/src/lib.rs): `README.md`, `_tables/documents.jsonl` (each user table's name
 * and number), `<table>/documents.jsonl` (one document per line, lossless export JSON) and
 * `<table>/generated_schema.jsonl` (`"uniform"`) for every user table, and with
 * `includeStorage=true` the files: `_storage/documents.jsonl` (their metadata) and
 * `_storage/<id>` (their bytes). The emulator builds the ZIP while it answers the request, so the
 * export the CLI then watches (`_system/cli/exports:getLatest`) has completed already.
 */

/** Upstream's README of a snapshot export. */
const README = `# Welcome to your Convex snapshot export!

This ZIP file contains a snapshot of the tables in your Convex deployment.

Documents for each table are listed as lines of JSON in
<table_name>/documents.jsonl files.

For details on the format and how to use this snapshot with npx convex import,
check out [the docs](https://docs.convex.dev/database/import-export/export) or
ask us in [Discord](http://convex.dev/community).
`;

/** The first number Convex gives a user table. */
const FIRST_TABLE_NUMBER = 10001;

/** Lines of documents (lossless export JSON), or of a system table's rows (plain JSON: their shape is known). */
const jsonLines = (values: unknown[], format: (value: unknown) => string = JSON.stringify) => new TextEncoder().encode(values.map((value) => `${format(value)}\n`).join(""));
const nowNs = (context: EmulatorContext) => BigInt(context.now().getTime()) * 1_000_000n;

/** The files of the deployment in the ZIP: their metadata lines and their bytes. */
async function storageEntries(context: EmulatorContext, deployment: EmulatorDeployment, documents: DocumentWrite[]): Promise<Zippable> {
  const entries: Zippable = {};
  const metadata: unknown[] = [];
  for (const [id, value] of documents.filter(([documentId]) => tableOfDocumentId(documentId) === "_storage")) {
    const file = value as StoredFile & { _creationTime: number; contentType?: string };
    const bytes = await context.files.read(deployment.name, { sha256: file.sha256, size: file.size, contentType: file.contentType ?? null });
    if (!bytes) throw new EmulatorError(503, "StorageUnavailable", `The bytes of file ${id} are missing from the deployment's file storage.`);
    metadata.push({ _id: id, _creationTime: file._creationTime, sha256: file.sha256, size: file.size, ...(file.contentType !== undefined && { contentType: file.contentType }) });
    entries[`_storage/${id}`] = bytes;
  }
  entries["_storage/documents.jsonl"] = jsonLines(metadata);
  return entries;
}

/** The snapshot ZIP of the deployment's documents (and files). */
async function snapshotZip(context: EmulatorContext, deployment: EmulatorDeployment, includeStorage: boolean): Promise<Uint8Array> {
  const documents = await listDocuments(context.db, deployment.name);
  const tables = await userTableNames(context, deployment, documents);
  const entries: Zippable = {
    "README.md": new TextEncoder().encode(README),
    "_tables/documents.jsonl": jsonLines(tables.map((name, index) => ({ name, id: FIRST_TABLE_NUMBER + index }))),
  };
  for (const table of tables) {
    entries[`${table}/documents.jsonl`] = jsonLines(documents.filter(([id]) => tableOfDocumentId(id) === table).map(([, value]) => value), toExportJson);
    entries[`${table}/generated_schema.jsonl`] = jsonLines(["uniform"]);
  }
  if (includeStorage) Object.assign(entries, await storageEntries(context, deployment, documents));
  return zipSync(entries, { level: 6 });
}

const exportQuery = z.object({ includeStorage: z.enum(["true", "false"]).default("false"), component: z.string().optional() });

/** `POST /api/export/request/zip?includeStorage=…`: builds the export and keeps it as the deployment's latest. */
export async function requestExport(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const { includeStorage, component } = readQuery(request, exportQuery);
  // The emulator runs no components: only the root app's tables exist.
  if (component) throw new EmulatorError(400, "InvalidComponent", `Component ${component.slice(0, 100)} does not exist in this deployment.`);
  const startTs = nowNs(context);
  const zip = await snapshotZip(context, deployment, includeStorage === "true");
  const blobPathname = context.snapshots.pathname(deployment.name, `export:${startTs}`);
  await context.snapshots.write(blobPathname, zip, "application/zip");
  const replaced = await upsertSnapshotExport(context.db, deployment.name, { startTs, completeTs: nowNs(context), includeStorage: includeStorage === "true", blobPathname });
  // The export is recorded; a replaced ZIP left behind was logged by the snapshot blobs.
  if (replaced && replaced !== blobPathname) await context.snapshots.delete([replaced]).catch(() => undefined);
  return new Response(null, { status: 200 });
}

/** `GET /api/export/zip/<start_ts>`: the export's ZIP, as an attachment named as upstream names it. */
export async function downloadExport(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const id = decodeURIComponent(new URL(request.url).pathname.slice("/api/export/zip/".length));
  if (!/^\d{1,19}$/.test(id)) throw new EmulatorError(400, "BadSnapshotId", "Snapshot Id did not parse to an ID.");
  const latest = await findSnapshotExport(context.db, deployment.name);
  const zip = latest?.startTs === BigInt(id) ? await context.snapshots.read(latest.blobPathname) : null;
  if (!zip) throw new EmulatorError(404, "ExportNotFound", `The requested export ${id} was not found`);
  return new Response(zip, {
    headers: {
      "content-type": "application/zip",
      "content-disposition": `attachment; filename=snapshot_${deployment.name}_${id}.zip`,
      "cache-control": "private, max-age=2592000",
    },
  });
}
