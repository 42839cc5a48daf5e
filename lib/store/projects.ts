import { isUuid } from "./ids";
import type { SqlExecutor } from "./port";

/** Spec 2.1: the `backendProject` field of a project; null means "not connected". */
export type BackendProjectState =
  | { kind: "connecting" }
  | {
      kind: "connected";
      projectSlug: string;
      teamSlug: string;
      deploymentUrl: string;
      deploymentName: string;
      warningMessage?: string;
    }
  | { kind: "failed"; errorMessage: string };

export interface Project {
  id: string;
  ownerId: string;
  name: string;
  sandboxId: string | null;
  previewUrl: string | null;
  backendProject: BackendProjectState | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ProjectRow {
  id: string;
  owner_id: string;
  name: string;
  sandbox_id: string | null;
  preview_url: string | null;
  backend_project: BackendProjectState | null;
  created_at: Date;
  updated_at: Date;
}

const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  sandboxId: row.sandbox_id,
  previewUrl: row.preview_url,
  backendProject: row.backend_project,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function insertProject(db: SqlExecutor, input: { ownerId: string; name: string }): Promise<Project> {
  const { rows } = await db.query<ProjectRow>("insert into projects (owner_id, name) values ($1, $2) returning *", [
    input.ownerId,
    input.name,
  ]);
  return toProject(rows[0]);
}

export async function getProject(db: SqlExecutor, id: string): Promise<Project | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ProjectRow>("select * from projects where id = $1", [id]);
  return rows[0] ? toProject(rows[0]) : null;
}

/** The project when `ownerId` owns it; null both when it is missing and when it is someone else's. */
export async function getOwnedProject(db: SqlExecutor, id: string, ownerId: string): Promise<Project | null> {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<ProjectRow>("select * from projects where id = $1 and owner_id = $2", [id, ownerId]);
  return rows[0] ? toProject(rows[0]) : null;
}

export async function listProjects(db: SqlExecutor, ownerId: string): Promise<Project[]> {
  const { rows } = await db.query<ProjectRow>(
    "select * from projects where owner_id = $1 order by created_at desc, id",
    [ownerId],
  );
  return rows.map(toProject);
}

/** Every project id in the store, in creation order (maintenance commands). */
export async function listAllProjectIds(db: SqlExecutor): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("select id from projects order by created_at, id");
  return rows.map((row) => row.id);
}

/** Every project that has a sandbox, with its sandbox id (the repository autosave goes through them). */
export async function listProjectSandboxes(db: SqlExecutor): Promise<{ projectId: string; sandboxId: string }[]> {
  const { rows } = await db.query<{ id: string; sandbox_id: string }>("select id, sandbox_id from projects where sandbox_id is not null order by created_at, id");
  return rows.map((row) => ({ projectId: row.id, sandboxId: row.sandbox_id }));
}

export async function updateProjectSandbox(
  db: SqlExecutor,
  id: string,
  sandbox: { sandboxId: string | null; previewUrl: string | null },
): Promise<void> {
  await db.query("update projects set sandbox_id = $2, preview_url = $3, updated_at = now() where id = $1", [
    id,
    sandbox.sandboxId,
    sandbox.previewUrl,
  ]);
}

/** Writes the backend state unconditionally. */
export async function setBackendProject(db: SqlExecutor, id: string, state: BackendProjectState | null): Promise<void> {
  await db.query("update projects set backend_project = $2, updated_at = now() where id = $1", [
    id,
    state === null ? null : JSON.stringify(state),
  ]);
}

/** Renames a project; the renamed project, or null when it is gone. */
export async function renameProject(db: SqlExecutor, id: string, name: string): Promise<Project | null> {
  const { rows } = await db.query<ProjectRow>("update projects set name = $2, updated_at = now() where id = $1 returning *", [id, name]);
  return rows[0] ? toProject(rows[0]) : null;
}

export async function deleteProject(db: SqlExecutor, id: string): Promise<void> {
  if (!isUuid(id)) return;
  await db.query("delete from projects where id = $1", [id]);
}

/** Projects whose sandbox serves a preview (their dev servers are resumed when the service starts), oldest first. */
export async function listProjectsWithPreview(db: SqlExecutor): Promise<Project[]> {
  const { rows } = await db.query<ProjectRow>(
    "select * from projects where sandbox_id is not null and preview_url is not null order by created_at, id",
  );
  return rows.map(toProject);
}

/**
 * Records a sandbox for a project whose recorded sandbox is still `replacing` (null: it has none,
 * else one that is gone); false when another request recorded one first (the caller then uses that one).
 */
export async function claimProjectSandbox(
  db: SqlExecutor,
  id: string,
  replacing: string | null,
  sandbox: { sandboxId: string; previewUrl: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    "update projects set sandbox_id = $2, preview_url = $3, updated_at = now() where id = $1 and sandbox_id is not distinct from $4",
    [id, sandbox.sandboxId, sandbox.previewUrl, replacing],
  );
  return rowCount > 0;
}

/**
 * Locks the project's row until `tx` ends (provisioning runs and disconnect serialise on it) and
 * answers its backend state; undefined when the project does not exist.
 */
export async function lockProjectRow(tx: SqlExecutor, id: string): Promise<{ backendProject: BackendProjectState | null } | undefined> {
  const { rows } = await tx.query<{ backend_project: BackendProjectState | null }>("select backend_project from projects where id = $1 for update", [id]);
  return rows[0] ? { backendProject: rows[0].backend_project } : undefined;
}
