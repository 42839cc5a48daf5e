import crypto from "node:crypto";
import { jsonToConvex, type JSONValue } from "convex/values";
import { unzipSync } from "fflate";
import { z } from "zod";
import { log } from "@/lib/log";
import { userTableNames } from "./cli-data";
import type { EmulatorContext } from "./context";
import { requireKey } from "./deployment";
import { EmulatorError, randomSecret, readJson, readQuery } from "./http";
import { importIdOf, parseImportId } from "./snapshot-queries";
import { fromExportJson } from "./snapshot-json";
import { findSnapshotImport, insertSnapshotImport, updateSnapshotImportState, type ImportFormat, type ImportMode } from "./snapshot-store";
import type { StoredFile } from "./storage";
import { listDocuments, tableOfDocumentId, type DocumentWrite, type EmulatorDeployment } from "./store";

/**
 * `npx convex import`, as the CLI speaks it (convex/dist/cli/lib/convexImport.js) and upstream
 * answers it (crates/local_backend/src/snapshot_import.rs, crates/application/src/snapshot_import):
 * `start_upload` → `{uploadToken}`, `upload_part` (the file in parts, each kept as a blob) → a
 * part token, `finish_upload` → `{importId}`, then the CLI watches `_system/cli/queryImport`
 * (./snapshot-queries), shows the change summary of `waiting_for_confirmation`, and
 * `perform_import` writes the documents. A snapshot ZIP (./snapshot-export's layout), or JSONL or
 * a JSON array into one table. Documents keep their `_id` when it is an id of the emulator's form
 * not taken, and their `_creationTime`. Unlike upstream, the file is parsed when its upload
 * finishes, so a file it cannot import is refused there (400) rather than by a failed import.
 */

/** The largest file an import takes (the emulator holds it in memory while it imports). */
export const IMPORT_LIMIT_BYTES = 100 * 1024 * 1024;

/** Parts of one upload (the CLI's chunk count is at most 9,999). */
const MAX_PARTS = 10_000;

const importError = (code: string, message: string) => new EmulatorError(400, code, message);

/** Upstream's `TableName` rule for user tables. */
const TABLE_NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

/** A parsed import: documents per table (convex JSON, file order) and the files for `_storage`. */
interface ParsedImport {
  tables: Map<string, Record<string, unknown>[]>;
  /** Null when the import has no `_storage` table. */
  files: { metadata: Record<string, unknown>; bytes: Uint8Array }[] | null;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw importError("NotUtf8", `Import wasn't valid UTF8: ${(error as Error).message}`);
  }
}

/** An imported row as a document: an object that is a Convex value. */
function asDocument(value: unknown, row: number): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw importError("NotAnObject", `Row ${row} wasn't an object`);
  try {
    jsonToConvex(value as JSONValue);
  } catch (error) {
    throw importError("InvalidConvexValue", `Row ${row} wasn't a valid Convex value: ${(error as Error).message}`);
  }
  return value as Record<string, unknown>;
}

/** JSON lines as documents; `lossless` reads Convex's export JSON (a snapshot table with a "uniform" generated schema). */
function parseJsonLines(text: string, lossless: boolean): Record<string, unknown>[] {
  const documents: Record<string, unknown>[] = [];
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = lossless ? fromExportJson(line) : JSON.parse(line);
    } catch (error) {
      throw importError("JsonInvalidRow", `Row ${index + 1} wasn't valid JSON: ${(error as Error).message}`);
    }
    documents.push(asDocument(value, index + 1));
  });
  return documents;
}

function checkTableName(name: string): void {
  if (!TABLE_NAME.test(name)) throw importError("InvalidTableName", `table name '${name.slice(0, 100)}' invalid: table names start with a letter and hold letters, digits and underscores (at most 64)`);
}

const DOCUMENTS_FILE = /^(?:.*\/)?([^/]+)\/documents\.jsonl$/;
const GENERATED_SCHEMA_FILE = /^(?:.*\/)?[^/]+\/generated_schema\.jsonl$/;
/** `_storage/<id>`, with an optional extension (upstream names files `<id>.png`). */
const STORAGE_FILE = /^(?:.*\/)?_storage\/([^/.]+)(?:\.[^/]+)?$/;

/** A snapshot ZIP's tables and files. */
function parseZip(bytes: Uint8Array): ParsedImport {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch {
    throw importError("InvalidZip", "invalid zip file");
  }
  const tables = new Map<string, Record<string, unknown>[]>();
  const fileBytes = new Map<string, Uint8Array>();
  let storageMetadata: Record<string, unknown>[] | null = null;
  let snapshotFiles = 0;
  for (const [path, content] of Object.entries(entries)) {
    if (path.includes("_components/")) throw importError("InvalidComponentName", `The emulator has no components; the snapshot holds ${path.slice(0, 200)}`);
    const documents = DOCUMENTS_FILE.exec(path);
    const storageFile = STORAGE_FILE.exec(path);
    if (documents) {
      snapshotFiles++;
      const table = documents[1];
      const schema = entries[path.replace(/documents\.jsonl$/, "generated_schema.jsonl")];
      const lossless = schema !== undefined && decodeUtf8(schema).split("\n")[0].trim() === '"uniform"';
      const rows = parseJsonLines(decodeUtf8(content), lossless);
      if (table === "_tables") {
        for (const row of rows) {
          if (typeof row.name !== "string") throw importError("InvalidConvexValue", "A row of _tables/documents.jsonl has no table name");
          checkTableName(row.name);
          if (!tables.has(row.name)) tables.set(row.name, []);
        }
      } else if (table === "_storage") {
        storageMetadata = rows;
      } else if (!table.startsWith("_")) {
        checkTableName(table);
        tables.set(table, [...(tables.get(table) ?? []), ...rows]);
      }
    } else if (storageFile) {
      fileBytes.set(storageFile[1], content);
    } else if (GENERATED_SCHEMA_FILE.test(path)) {
      snapshotFiles++;
    }
  }
  if (snapshotFiles === 0) throw importError("InvalidZip", "This ZIP file is not a Convex snapshot export: it holds no <table>/documents.jsonl file.");
  const files = storageMetadata?.map((metadata) => {
    const bytes = typeof metadata._id === "string" ? fileBytes.get(metadata._id) : undefined;
    if (!bytes) throw importError("InvalidStorageId", `_storage file ${String(metadata._id).slice(0, 100)} is missing from the ZIP`);
    return { metadata, bytes };
  });
  return { tables, files: files ?? null };
}

/** The uploaded file's tables, by format. */
function parseUpload(bytes: Uint8Array, format: ImportFormat): ParsedImport {
  if (format.format === "zip") return parseZip(bytes);
  if (format.format === "jsonl") return { tables: new Map([[format.table, parseJsonLines(decodeUtf8(bytes), false)]]), files: null };
  let array: unknown;
  try {
    array = JSON.parse(decodeUtf8(bytes));
  } catch (error) {
    throw importError("NotJson", `Not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(array)) throw importError("NotJsonArray", "Not a JSON array");
  return { tables: new Map([[format.table, array.map((value, index) => asDocument(value, index + 1))]]), files: null };
}

/** What an import writes, and the summary the CLI asks to confirm. */
interface ImportPlan {
  writes: DocumentWrite[];
  files: { file: StoredFile; bytes: Uint8Array }[];
  rowsWritten: number;
  message: string;
  requireConfirmation: boolean;
}

const ID_COUNTER = /^(\d+)/;
/** convex-test pads an id's counter so that the id is 32 characters long, as Convex's typically are. */
const newId = (counter: number, table: string) => `${String(counter).padStart(32 - table.length, "0")}${table}`;
const formatCount = (count: number) => count.toLocaleString("en-US");

/** Upstream's change table (`render_table_changes`): `table | create | delete |` per table. */
function changeSummary(changes: { table: string; added: number; deleted: number; existing: number }[]): string[] {
  const rows = [["table", "create", "delete"], ...changes.map((change) => [change.table, formatCount(change.added), `${formatCount(change.deleted)} of ${formatCount(change.existing)}${change.table === "_storage" ? " files" : ""}`])];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map((row) => `${row.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`);
  lines.splice(1, 0, "-".repeat(widths[0] + 3 + widths[1] + 3 + widths[2] + 2));
  return lines;
}

/** Plans the import against the deployment's documents now; refuses a non-empty table in RequireEmpty mode. */
async function planImport(context: EmulatorContext, deployment: EmulatorDeployment, parsed: ParsedImport, mode: ImportMode): Promise<ImportPlan> {
  const existing = await listDocuments(context.db, deployment.name);
  const imported = new Map(parsed.tables);
  if (parsed.files) imported.set("_storage", parsed.files.map(({ metadata }) => metadata));
  const targets = new Set(imported.keys());
  if (mode === "ReplaceAll") for (const table of await userTableNames(context, deployment, existing)) targets.add(table);

  const writes: DocumentWrite[] = [];
  const changes = [];
  const deletedIds = new Set<string>();
  for (const table of [...targets].sort()) {
    const current = existing.filter(([id]) => tableOfDocumentId(id) === table);
    if (mode === "RequireEmpty" && current.length > 0) throw importError("TableExists", `Table ${table} already exists. Please choose a new table name or use replace/append modes.`);
    const replaced = mode === "Replace" || mode === "ReplaceAll";
    if (replaced) for (const [id] of current) deletedIds.add(id);
    changes.push({ table, added: imported.get(table)?.length ?? 0, deleted: replaced ? current.length : 0, existing: current.length });
  }
  for (const id of deletedIds) writes.push([id, null]);

  // Ids of the emulator's form that no remaining document holds are kept; the others get new ones after every id in use.
  const taken = new Set(existing.map(([id]) => id).filter((id) => !deletedIds.has(id)));
  const kept = new Map<string, boolean[]>();
  for (const [table, documents] of imported) {
    kept.set(
      table,
      documents.map(({ _id: id }) => {
        const keep = typeof id === "string" && id === `${ID_COUNTER.exec(id)?.[1]}${table}` && !taken.has(id);
        if (keep) taken.add(id);
        return keep;
      }),
    );
  }
  let counter = 0;
  for (const id of [...existing.map(([existingId]) => existingId), ...taken]) counter = Math.max(counter, Number(ID_COUNTER.exec(id)?.[1] ?? 0));
  let clock = context.now().getTime();
  const documentOf = (table: string, document: Record<string, unknown>, index: number) => ({
    ...document,
    _id: kept.get(table)![index] ? (document._id as string) : newId(++counter, table),
    _creationTime: typeof document._creationTime === "number" ? document._creationTime : clock++,
  });

  const files: ImportPlan["files"] = [];
  let rowsWritten = 0;
  for (const [table, documents] of imported) {
    documents.forEach((document, index) => {
      const written = documentOf(table, document, index);
      if (table === "_storage") {
        const { bytes } = parsed.files![index];
        const contentType = typeof document.contentType === "string" ? document.contentType : null;
        const file: StoredFile = { sha256: crypto.createHash("sha256").update(bytes).digest("base64"), size: bytes.byteLength, contentType };
        files.push({ file, bytes });
        writes.push([written._id, { _id: written._id, _creationTime: written._creationTime, sha256: file.sha256, size: file.size, ...(contentType !== null && { contentType }) }]);
      } else {
        writes.push([written._id, written]);
      }
      rowsWritten++;
    });
  }
  const summary = changes.length > 0 ? ["Import change summary:", ...changeSummary(changes)] : [];
  return {
    writes,
    files,
    rowsWritten,
    message: [...summary, "Once the import has started, it will run in the background.\nInterrupting `npx convex import` will not cancel it."].join("\n"),
    requireConfirmation: changes.some((change) => change.deleted > 0),
  };
}

/** `POST /api/import/start_upload`: a token the parts of one file are uploaded under. */
export async function startImportUpload(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  return Response.json({ uploadToken: randomSecret() });
}

const partQuery = z.object({ uploadToken: z.string().min(1).max(200), partNumber: z.coerce.number().int().min(1).max(MAX_PARTS) });
const partPathname = (context: EmulatorContext, deployment: EmulatorDeployment, uploadToken: string, partNumber: number) =>
  context.snapshots.pathname(deployment.name, `upload:${uploadToken}:${partNumber}`);

/** `POST /api/import/upload_part?uploadToken=…&partNumber=…`: keeps one part; its token names its number and digest. */
export async function uploadImportPart(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const { uploadToken, partNumber } = readQuery(request, partQuery);
  const bytes = new Uint8Array(await request.arrayBuffer());
  await context.snapshots.write(partPathname(context, deployment, uploadToken, partNumber), bytes, "application/octet-stream");
  return Response.json(`${partNumber}:${crypto.createHash("sha256").update(bytes).digest("base64url")}`);
}

const finishBody = z.object({
  import: z.object({
    tableName: z.string().optional(),
    componentPath: z.string().optional(),
    mode: z.enum(["requireEmpty", "append", "replace", "replaceAll"]).default("requireEmpty"),
    format: z.enum(["csv", "jsonLines", "jsonArray", "zip"]),
  }),
  uploadToken: z.string().min(1).max(200),
  partTokens: z.array(z.string()).max(MAX_PARTS),
});

const MODES: Record<z.output<typeof finishBody>["import"]["mode"], ImportMode> = { requireEmpty: "RequireEmpty", append: "Append", replace: "Replace", replaceAll: "ReplaceAll" };

/** The import's format as upstream's `parse_format_arg` reads it, with its wording. */
function importFormat(format: z.output<typeof finishBody>["import"]["format"], tableName: string | undefined): ImportFormat {
  if (tableName !== undefined) checkTableName(tableName);
  if (format === "zip") {
    if (tableName !== undefined) throw importError("InvalidName", "ZIP import cannot have table name");
    return { format: "zip" };
  }
  if (format === "csv") throw importError("ImportFormatUnsupported", "The local deployment imports ZIP snapshots, JSONL and JSON arrays; convert the CSV file to JSONL to import it.");
  if (tableName === undefined) throw importError("InvalidName", `${format === "jsonLines" ? "JSONL" : "JSON"} import requires table name`);
  return { format: format === "jsonLines" ? "jsonl" : "json_array", table: tableName };
}

/** The uploaded parts, in order, checked against their tokens; their blobs are removed. */
async function collectParts(context: EmulatorContext, deployment: EmulatorDeployment, uploadToken: string, partTokens: string[]): Promise<Uint8Array> {
  const pathnames: string[] = [];
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (const [index, partToken] of partTokens.entries()) {
      const pathname = partPathname(context, deployment, uploadToken, index + 1);
      pathnames.push(pathname);
      const bytes = await context.snapshots.read(pathname);
      if (!bytes || partToken !== `${index + 1}:${crypto.createHash("sha256").update(bytes).digest("base64url")}`) {
        throw importError("InvalidUploadPart", `Part ${index + 1} of the upload is missing or does not match its part token`);
      }
      size += bytes.byteLength;
      if (size > IMPORT_LIMIT_BYTES) throw importError("ImportTooLarge", `The local deployment imports files of at most ${IMPORT_LIMIT_BYTES} bytes.`);
      parts.push(bytes);
    }
  } finally {
    // A part left behind was logged by the snapshot blobs; the upload's answer does not depend on it.
    await context.snapshots.delete(pathnames).catch(() => undefined);
  }
  return Buffer.concat(parts);
}

/** `POST /api/import/finish_upload`: the file is parsed and planned; the import waits for confirmation. */
export async function finishImportUpload(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const body = await readJson(request, finishBody);
  if (body.import.componentPath) throw importError("InvalidComponentName", `The emulator has no components; it cannot import into ${body.import.componentPath.slice(0, 100)}.`);
  const format = importFormat(body.import.format, body.import.tableName);
  const mode = MODES[body.import.mode];
  const bytes = await collectParts(context, deployment, body.uploadToken, body.partTokens);
  const plan = await planImport(context, deployment, parseUpload(bytes, format), mode);
  const blobPathname = context.snapshots.pathname(deployment.name, `import:${body.uploadToken}`);
  await context.snapshots.write(blobPathname, bytes, "application/octet-stream");
  const id = await insertSnapshotImport(context.db, deployment.name, {
    format,
    mode,
    state: { state: "waiting_for_confirmation", message_to_confirm: plan.message, require_manual_confirmation: plan.requireConfirmation },
    blobPathname,
  });
  return Response.json({ importId: importIdOf(id) });
}

const performBody = z.object({ importId: z.string() });

/** `POST /api/perform_import`: writes a confirmed import (a no-op for one no longer waiting, as upstream). */
export async function confirmImport(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  await requireKey(request, context, deployment);
  const { importId } = await readJson(request, performBody);
  const id = parseImportId(importId);
  const found = id === null ? null : await findSnapshotImport(context.db, deployment.name, id);
  if (id === null || !found) throw new EmulatorError(404, "ImportNotFound", `import ${importId.slice(0, 100)} not found`);
  if (found.state.state !== "waiting_for_confirmation" || !found.blobPathname) return new Response(null, { status: 200 });
  const bytes = await context.snapshots.read(found.blobPathname);
  if (!bytes) throw new EmulatorError(503, "ImportUnavailable", "The uploaded file of this import is missing from the blob store; upload it again.");
  let plan: ImportPlan;
  try {
    // Planned again: the deployment's documents may have changed since the summary.
    plan = await planImport(context, deployment, parseUpload(bytes, found.format), found.mode);
  } catch (error) {
    if (error instanceof EmulatorError) await updateSnapshotImportState(context.db, id, "waiting_for_confirmation", { state: "failed", error_message: error.message });
    throw error;
  }
  if (!(await updateSnapshotImportState(context.db, id, "waiting_for_confirmation", { state: "in_progress", progress_message: "Importing", checkpoint_messages: [] }))) {
    return new Response(null, { status: 200 });
  }
  try {
    await context.files.storeAll(deployment.name, plan.files, () => context.runtimes.writeDocuments(context, deployment.name, plan.writes));
  } catch (error) {
    const message = "The import's documents could not be written; try again.";
    log.warn("emulated import not written", { deployment: deployment.name, error });
    await updateSnapshotImportState(context.db, id, "in_progress", { state: "failed", error_message: message });
    throw new EmulatorError(503, "ImportUnavailable", message);
  }
  await updateSnapshotImportState(context.db, id, "in_progress", { state: "completed", timestamp: BigInt(context.now().getTime()) * 1_000_000n, num_rows_written: BigInt(plan.rowsWritten) });
  if (plan.writes.some(([documentId, value]) => value === null && documentId.endsWith("_storage"))) {
    await context.files.sweep(context.db, deployment.name).catch((error) => log.warn("replaced files' blobs not removed", { deployment: deployment.name, error }));
  }
  // The import is done; a blob left behind was logged by the snapshot blobs.
  await context.snapshots.delete([found.blobPathname]).catch(() => undefined);
  return new Response(null, { status: 200 });
}
