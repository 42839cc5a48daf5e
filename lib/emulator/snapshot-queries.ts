import { z } from "zod";
import type { EmulatorContext } from "./context";
import { int64Json } from "./snapshot-json";
import { findSnapshotExport, findSnapshotImport, listSnapshotImports, type SnapshotImport } from "./snapshot-store";
import type { EmulatorDeployment } from "./store";

/**
 * The system queries `npx convex export` and `npx convex import` watch, answered as upstream's
 * (`npm-packages/system-udfs/convex/_system/cli/exports.ts`, `queryImport.ts`) with the
 * `_exports` / `_snapshot_imports` documents' shapes; int64 fields are convex JSON `$integer`.
 */

/** How long a snapshot export is kept (upstream's default expiration). */
const EXPORT_EXPIRATION_NS = 14n * 24n * 60n * 60n * 1_000_000_000n;

/** An import's id, as the emulator's document ids read: its number, then its system table. */
const IMPORT_ID = /^(\d{1,15})_snapshot_imports$/;
export const importIdOf = (id: number) => `${id}_snapshot_imports`;

/** The import this id names, or null when the id is not one. */
export function parseImportId(id: string): number | null {
  const match = IMPORT_ID.exec(id);
  return match ? Number(match[1]) : null;
}

/** `_system/cli/exports:getLatest`: the latest export as an `_exports` document, or null. */
export async function latestExport(context: EmulatorContext, deployment: EmulatorDeployment): Promise<unknown> {
  const latest = await findSnapshotExport(context.db, deployment.name);
  if (!latest) return null;
  return {
    _creationTime: Number(latest.startTs / 1_000_000n),
    state: "completed",
    start_ts: int64Json(latest.startTs),
    complete_ts: int64Json(latest.completeTs),
    expiration_ts: int64Json(latest.completeTs + EXPORT_EXPIRATION_NS),
    format: { format: "zip", include_storage: latest.includeStorage },
    requestor: "snapshotExport",
  };
}

/** A `_snapshot_imports` document. */
function importDocument(found: SnapshotImport): unknown {
  const state = Object.fromEntries(Object.entries(found.state).map(([key, value]) => [key, typeof value === "bigint" ? int64Json(value) : value]));
  return { _id: importIdOf(found.id), _creationTime: found.createdAt.getTime(), state, format: found.format, mode: found.mode, requestor: { type: "snapshotImport" } };
}

const importArgs = z.object({ importId: z.string() });

/** `_system/cli/queryImport`: one import, or null. */
export async function queryImport(context: EmulatorContext, deployment: EmulatorDeployment, args: unknown): Promise<{ ok: true; value: unknown } | { ok: false; errorMessage: string }> {
  const parsed = importArgs.safeParse(args);
  const id = parsed.success ? parseImportId(parsed.data.importId) : null;
  if (id === null) return { ok: false, errorMessage: "ArgumentValidationError: Value does not match validator.\nPath: .importId\nValidator: v.id(\"_snapshot_imports\")" };
  const found = await findSnapshotImport(context.db, deployment.name, id);
  return { ok: true, value: found && importDocument(found) };
}

/** `_system/cli/queryImport:list`: the latest 20 imports, newest first. */
export async function listImports(context: EmulatorContext, deployment: EmulatorDeployment): Promise<unknown[]> {
  return (await listSnapshotImports(context.db, deployment.name, 20)).map(importDocument);
}
