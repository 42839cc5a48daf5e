import { getSecretBox, isEncryptedSecret } from "@/lib/secrets";
import type { SqlExecutor } from "@/lib/store";
import { digest, randomSecret } from "./http";

/** Repositories of the emulator's tables (supabase/migrations/20261123000100_emulator.sql). */

export interface EmulatorTeam {
  id: number;
  slug: string;
  projectQuota: number | null;
  createdAt: Date;
}

export interface EmulatorProject {
  id: number;
  teamId: number;
  teamSlug: string;
  slug: string;
  name: string;
  createdAt: Date;
}

export type DeploymentType = "dev" | "prod";

export interface EmulatorDeployment {
  id: number;
  name: string;
  projectId: number;
  deploymentType: DeploymentType;
  projectSlug: string;
  projectName: string;
  teamId: number;
  teamSlug: string;
  /** Loopback port of its listener; null until the first listener was opened. */
  port: number | null;
  createdAt: Date;
  /** Paused through the deployment API: new function calls are refused. */
  paused: boolean;
}

interface TeamRow {
  id: number;
  slug: string;
  project_quota: number | null;
  created_at: Date;
}

const TEAM_COLUMNS = "id, slug, project_quota, created_at";

const toTeam = (row: TeamRow): EmulatorTeam => ({ id: Number(row.id), slug: row.slug, projectQuota: row.project_quota, createdAt: new Date(row.created_at) });

/** Creates the team or rotates its token to `token` (the built-in team after a secrets-key change). */
export async function upsertTeam(db: SqlExecutor, input: { slug: string; token: string; projectQuota?: number | null }): Promise<EmulatorTeam> {
  const { rows } = await db.query<TeamRow>(
    `insert into emulator_teams (slug, name, token_hash, project_quota) values ($1, $1, $2, $3)
     on conflict (slug) do update set token_hash = excluded.token_hash, project_quota = excluded.project_quota
     returning ${TEAM_COLUMNS}`,
    [input.slug, digest(input.token), input.projectQuota ?? null],
  );
  return toTeam(rows[0]);
}

/**
 * Adds a team with a fresh token (tests, benchmarks, multi-team demos). `projectQuota` overrides
 * the emulator's default quota for this team.
 */
export async function createEmulatorTeam(db: SqlExecutor, input: { slug: string; projectQuota?: number }): Promise<{ team: EmulatorTeam; token: string }> {
  const token = `emu_team_${randomSecret()}`;
  return { team: await upsertTeam(db, { slug: input.slug, token, projectQuota: input.projectQuota }), token };
}

/** The team a management-API bearer token belongs to: a team token or an OAuth access token. */
export async function findTeamByToken(db: SqlExecutor, token: string): Promise<EmulatorTeam | null> {
  const { rows } = await db.query<TeamRow>(
    `select ${TEAM_COLUMNS} from emulator_teams where token_hash = $1
     union all
     select t.id, t.slug, t.project_quota, t.created_at from emulator_oauth_tokens o join emulator_teams t on t.id = o.team_id
       where o.token_hash = $1
     limit 1`,
    [digest(token)],
  );
  return rows[0] ? toTeam(rows[0]) : null;
}

/** Locks the team row for the rest of the transaction and counts its projects (quota checks). */
export async function lockTeamAndCountProjects(tx: SqlExecutor, teamId: number): Promise<number> {
  await tx.query("select id from emulator_teams where id = $1 for update", [teamId]);
  const { rows } = await tx.query<{ count: number }>("select count(*)::int as count from emulator_projects where team_id = $1", [teamId]);
  return rows[0].count;
}

interface ProjectRow {
  id: number;
  team_id: number;
  team_slug: string;
  slug: string;
  name: string;
  created_at: Date;
}

const PROJECT_SELECT = `select p.id, p.team_id, t.slug as team_slug, p.slug, p.name, p.created_at
  from emulator_projects p join emulator_teams t on t.id = p.team_id`;

const toProject = (row: ProjectRow): EmulatorProject => ({
  id: Number(row.id),
  teamId: Number(row.team_id),
  teamSlug: row.team_slug,
  slug: row.slug,
  name: row.name,
  createdAt: new Date(row.created_at),
});

/** Inserts a project; false when the slug is taken on this team. */
export async function insertProject(tx: SqlExecutor, input: { teamId: number; slug: string; name: string }): Promise<number | null> {
  const { rows } = await tx.query<{ id: number }>(
    `insert into emulator_projects (team_id, slug, name) values ($1, $2, $3)
     on conflict (team_id, slug) do nothing returning id`,
    [input.teamId, input.slug, input.name],
  );
  return rows[0] ? Number(rows[0].id) : null;
}

export async function findProject(db: SqlExecutor, teamId: number, where: { id: number } | { slug: string }): Promise<EmulatorProject | null> {
  const [column, value] = "id" in where ? ["id", where.id] : ["slug", where.slug];
  const { rows } = await db.query<ProjectRow>(`${PROJECT_SELECT} where p.team_id = $1 and p.${column} = $2`, [teamId, value]);
  return rows[0] ? toProject(rows[0]) : null;
}

/**
 * One page of a team's projects by id. `afterId` is the cursor (last id of the previous page);
 * `q` filters by name or slug, case-insensitive. Fetches one row more than `limit` to tell whether more follow.
 */
export async function listProjects(db: SqlExecutor, teamId: number, page: { afterId: number; limit: number; q?: string }): Promise<EmulatorProject[]> {
  const { rows } = await db.query<ProjectRow>(
    `${PROJECT_SELECT} where p.team_id = $1 and p.id > $2
       and ($3::text is null or p.name ilike '%' || $3 || '%' or p.slug ilike '%' || $3 || '%')
     order by p.id limit $4`,
    [teamId, page.afterId, page.q ?? null, page.limit + 1],
  );
  return rows.map(toProject);
}

/** Deletes a project of a team (its deployments, keys and variables cascade); false when absent. */
export async function deleteProject(db: SqlExecutor, teamId: number, projectId: number): Promise<boolean> {
  const { rowCount } = await db.query("delete from emulator_projects where team_id = $1 and id = $2", [teamId, projectId]);
  return rowCount > 0;
}

/** Deletes one deployment of a team (its keys, variables, pushes and documents go with it); false when it is not there. */
export async function deleteDeployment(db: SqlExecutor, teamId: number, name: string): Promise<boolean> {
  const { rowCount } = await db.query(
    "delete from emulator_deployments d using emulator_projects p where p.id = d.project_id and p.team_id = $1 and d.name = $2",
    [teamId, name],
  );
  return rowCount > 0;
}

export async function setDeploymentPaused(db: SqlExecutor, name: string, paused: boolean): Promise<void> {
  await db.query("update emulator_deployments set paused = $2 where name = $1", [name, paused]);
}

/** Inserts a deployment; false when the name is taken or the project already has one of this type. */
export async function insertDeployment(tx: SqlExecutor, input: { name: string; projectId: number; deploymentType: DeploymentType }): Promise<boolean> {
  const { rowCount } = await tx.query(
    "insert into emulator_deployments (name, project_id, deployment_type) values ($1, $2, $3) on conflict do nothing",
    [input.name, input.projectId, input.deploymentType],
  );
  if (rowCount === 0) return false;
  // A new deployment starts with the project's default variables of its type.
  const defaults = await listDefaultEnvVars(tx, input.projectId, { deploymentType: input.deploymentType });
  await applyEnvChanges(tx, input.name, defaults);
  return true;
}

interface DeploymentRow {
  id: number;
  name: string;
  project_id: number;
  deployment_type: DeploymentType;
  project_slug: string;
  project_name: string;
  team_id: number;
  team_slug: string;
  port: number | null;
  created_at: Date;
  paused: boolean;
}

const DEPLOYMENT_SELECT = `select d.id, d.name, d.project_id, d.deployment_type, p.slug as project_slug, p.name as project_name,
    t.id as team_id, t.slug as team_slug, d.port, d.created_at, d.paused
  from emulator_deployments d join emulator_projects p on p.id = d.project_id join emulator_teams t on t.id = p.team_id`;

const toDeployment = (row: DeploymentRow): EmulatorDeployment => ({
  id: Number(row.id),
  name: row.name,
  projectId: Number(row.project_id),
  deploymentType: row.deployment_type,
  projectSlug: row.project_slug,
  projectName: row.project_name,
  teamId: Number(row.team_id),
  teamSlug: row.team_slug,
  port: row.port,
  createdAt: new Date(row.created_at),
  paused: row.paused,
});

export async function findDeployment(db: SqlExecutor, where: { name: string } | { projectId: number; deploymentType: DeploymentType }): Promise<EmulatorDeployment | null> {
  const { rows } =
    "name" in where
      ? await db.query<DeploymentRow>(`${DEPLOYMENT_SELECT} where d.name = $1`, [where.name])
      : await db.query<DeploymentRow>(`${DEPLOYMENT_SELECT} where d.project_id = $1 and d.deployment_type = $2`, [where.projectId, where.deploymentType]);
  return rows[0] ? toDeployment(rows[0]) : null;
}

/** A project's deployments, optionally of one type, oldest first. */
export async function listDeployments(db: SqlExecutor, projectId: number, deploymentType?: DeploymentType): Promise<EmulatorDeployment[]> {
  const { rows } = await db.query<DeploymentRow>(
    `${DEPLOYMENT_SELECT} where d.project_id = $1 and ($2::text is null or d.deployment_type = $2) order by d.id`,
    [projectId, deploymentType ?? null],
  );
  return rows.map(toDeployment);
}

/** A page of a team's deployments by id, after `afterId`; one row more than `limit` says there is another page. */
export async function listTeamDeployments(
  db: SqlExecutor,
  teamId: number,
  page: { afterId: number; limit: number; projectId?: number; deploymentType?: DeploymentType; q?: string },
): Promise<EmulatorDeployment[]> {
  const { rows } = await db.query<DeploymentRow>(
    `${DEPLOYMENT_SELECT} where t.id = $1 and d.id > $2 and ($3::bigint is null or d.project_id = $3)
      and ($4::text is null or d.deployment_type = $4) and ($5::text is null or strpos(d.name, $5) > 0)
      order by d.id limit $6`,
    [teamId, page.afterId, page.projectId ?? null, page.deploymentType ?? null, page.q ?? null, page.limit + 1],
  );
  return rows.map(toDeployment);
}

/** Every deployment that has had a listener (their ports are reopened at start). */
export async function listDeploymentsWithPort(db: SqlExecutor): Promise<EmulatorDeployment[]> {
  const { rows } = await db.query<DeploymentRow>(`${DEPLOYMENT_SELECT} where d.port is not null order by d.id`);
  return rows.map(toDeployment);
}

/** Where the next port search starts, counting from 0: one more on every call (a sequence, never handed out twice). */
export async function nextPortCursor(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ cursor: string }>("select nextval('emulator_port_cursor') - 1 as cursor");
  return Number(rows[0].cursor);
}

/** Records the port of a deployment's first listener; false when another deployment holds it. */
export async function setDeploymentPort(db: SqlExecutor, name: string, port: number): Promise<boolean> {
  const { rowCount } = await db.query("update emulator_deployments set port = $2 where name = $1 and port is null and not exists (select 1 from emulator_deployments where port = $2)", [name, port]);
  return rowCount > 0;
}

/** Records a deployment key by the digest of its secret part. */
export async function insertDeployKey(db: SqlExecutor, deploymentName: string, secret: string): Promise<void> {
  await db.query("insert into emulator_deploy_keys (token_hash, deployment_name) values ($1, $2)", [digest(secret), deploymentName]);
}

/** The deployment a key secret was issued for, or null. */
export async function findDeployKeyDeployment(db: SqlExecutor, secret: string): Promise<string | null> {
  const { rows } = await db.query<{ deployment_name: string }>("select deployment_name from emulator_deploy_keys where token_hash = $1", [digest(secret)]);
  return rows[0]?.deployment_name ?? null;
}

/*
 * Variable values are secrets (API keys the app's functions use): stored encrypted with the
 * process secret box like the admin keys, each bound to its row (a value copied to another
 * variable does not open). Rows written before encryption are encrypted by {@link encryptPlaintextEnvVars}.
 */
const envVarContext = (deploymentName: string, name: string) => `emulator-env:${deploymentName}:${name}`;
const defaultEnvVarContext = (projectId: number, deploymentType: string, name: string) => `emulator-default-env:${projectId}:${deploymentType}:${name}`;

/** Applies variable changes; an absent or null value removes the variable. */
export async function applyEnvChanges(tx: SqlExecutor, deploymentName: string, changes: { name: string; value?: string | null }[]): Promise<void> {
  for (const change of changes) {
    if (change.value === null || change.value === undefined) {
      await tx.query("delete from emulator_env_vars where deployment_name = $1 and name = $2", [deploymentName, change.name]);
    } else {
      await tx.query(
        `insert into emulator_env_vars (deployment_name, name, value) values ($1, $2, $3)
         on conflict (deployment_name, name) do update set value = excluded.value, updated_at = now()`,
        [deploymentName, change.name, getSecretBox().encrypt(change.value, envVarContext(deploymentName, change.name))],
      );
    }
  }
}

/** All variables of a deployment, by name. */
export async function listEnvVars(db: SqlExecutor, deploymentName: string): Promise<{ name: string; value: string }[]> {
  const { rows } = await db.query<{ name: string; value: string }>("select name, value from emulator_env_vars where deployment_name = $1 order by name", [deploymentName]);
  return rows.map((row) => ({ name: row.name, value: getSecretBox().decrypt(row.value, envVarContext(deploymentName, row.name)) }));
}

/**
 * Encrypts the variable values (deployments' and projects' defaults) stored in plain text before
 * values were encrypted; run at emulator start. Answers how many rows it encrypted.
 */
export async function encryptPlaintextEnvVars(db: SqlExecutor): Promise<number> {
  const box = getSecretBox();
  const plain = (await db.query<{ deployment_name: string; name: string; value: string }>("select deployment_name, name, value from emulator_env_vars")).rows.filter(
    (row) => !isEncryptedSecret(row.value),
  );
  for (const row of plain) {
    await db.query("update emulator_env_vars set value = $3 where deployment_name = $1 and name = $2 and value = $4", [
      row.deployment_name,
      row.name,
      box.encrypt(row.value, envVarContext(row.deployment_name, row.name)),
      row.value,
    ]);
  }
  const plainDefaults = (
    await db.query<{ project_id: number; deployment_type: string; name: string; value: string }>("select project_id, deployment_type, name, value from emulator_default_env_vars")
  ).rows.filter((row) => !isEncryptedSecret(row.value));
  for (const row of plainDefaults) {
    await db.query("update emulator_default_env_vars set value = $4 where project_id = $1 and deployment_type = $2 and name = $3 and value = $5", [
      row.project_id,
      row.deployment_type,
      row.name,
      box.encrypt(row.value, defaultEnvVarContext(Number(row.project_id), row.deployment_type, row.name)),
      row.value,
    ]);
  }
  return plain.length + plainDefaults.length;
}

/** Default variables of a project, optionally filtered by name and type. */
export async function listDefaultEnvVars(
  db: SqlExecutor,
  projectId: number,
  filter: { name?: string; deploymentType?: string },
): Promise<{ name: string; value: string; deploymentType: string }[]> {
  const { rows } = await db.query<{ name: string; value: string; deployment_type: string }>(
    `select name, value, deployment_type from emulator_default_env_vars
     where project_id = $1 and ($2::text is null or name = $2) and ($3::text is null or deployment_type = $3) order by name, deployment_type`,
    [projectId, filter.name ?? null, filter.deploymentType ?? null],
  );
  return rows.map((row) => ({
    name: row.name,
    value: getSecretBox().decrypt(row.value, defaultEnvVarContext(projectId, row.deployment_type, row.name)),
    deploymentType: row.deployment_type,
  }));
}

/** Upserts default variables; a null value removes the variable of that type. */
export async function applyDefaultEnvChanges(
  tx: SqlExecutor,
  projectId: number,
  changes: { name: string; deploymentType: string; value?: string | null }[],
): Promise<void> {
  for (const change of changes) {
    if (change.value === null || change.value === undefined) {
      await tx.query("delete from emulator_default_env_vars where project_id = $1 and deployment_type = $2 and name = $3", [projectId, change.deploymentType, change.name]);
    } else {
      await tx.query(
        `insert into emulator_default_env_vars (project_id, deployment_type, name, value) values ($1, $2, $3, $4)
         on conflict (project_id, deployment_type, name) do update set value = excluded.value`,
        [projectId, change.deploymentType, change.name, getSecretBox().encrypt(change.value, defaultEnvVarContext(projectId, change.deploymentType, change.name))],
      );
    }
  }
}

export async function getEnvVar(db: SqlExecutor, deploymentName: string, name: string): Promise<string | null> {
  const { rows } = await db.query<{ value: string }>("select value from emulator_env_vars where deployment_name = $1 and name = $2", [deploymentName, name]);
  return rows[0] ? getSecretBox().decrypt(rows[0].value, envVarContext(deploymentName, name)) : null;
}

export async function insertOAuthCode(
  db: SqlExecutor,
  input: { code: string; clientId: string; teamId: number; redirectUri: string; codeChallenge: string | null; expiresAt: Date },
): Promise<void> {
  await db.query(
    `insert into emulator_oauth_codes (code_hash, client_id, team_id, redirect_uri, code_challenge, expires_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [digest(input.code), input.clientId, input.teamId, input.redirectUri, input.codeChallenge, input.expiresAt],
  );
}

export interface ConsumedOAuthCode {
  clientId: string;
  teamId: number;
  redirectUri: string;
  codeChallenge: string | null;
  expiresAt: Date;
}

/** Marks a code used and returns it; null when unknown or already used (single use, atomically). */
export async function consumeOAuthCode(db: SqlExecutor, code: string, now: Date): Promise<ConsumedOAuthCode | null> {
  const { rows } = await db.query<{ client_id: string; team_id: number; redirect_uri: string; code_challenge: string | null; expires_at: Date }>(
    `update emulator_oauth_codes set used_at = $2 where code_hash = $1 and used_at is null
     returning client_id, team_id, redirect_uri, code_challenge, expires_at`,
    [digest(code), now],
  );
  const row = rows[0];
  if (!row) return null;
  return { clientId: row.client_id, teamId: row.team_id, redirectUri: row.redirect_uri, codeChallenge: row.code_challenge, expiresAt: new Date(row.expires_at) };
}

export async function insertOAuthToken(db: SqlExecutor, input: { token: string; teamId: number; clientId: string }): Promise<void> {
  await db.query("insert into emulator_oauth_tokens (token_hash, team_id, client_id) values ($1, $2, $3)", [
    digest(input.token),
    input.teamId,
    input.clientId,
  ]);
}

/** One module of pushed code, as the CLI sends it (`moduleConfig`). */
export interface PushedModule {
  path: string;
  environment: "isolate" | "node";
  source: string;
  sourceMap?: string;
  sha256: string;
}

/** What a push records beside its modules. */
export interface PushRecord {
  id: string;
  deploymentName: string;
  config: { functions: string; nodeVersion?: string };
  /** Analysed functions, HTTP routes and crons per module path. */
  analysis: Record<string, unknown>;
  schema: unknown;
  auth: unknown[];
  /** The first stored document the schema refuses, or null. */
  schemaError: { tableName: string; error: string } | null;
}

interface PushRow {
  id: string;
  deployment_name: string;
  config: PushRecord["config"];
  analysis: PushRecord["analysis"];
  schema: unknown;
  auth: unknown[];
  schema_error: PushRecord["schemaError"];
}

const toPush = (row: PushRow): PushRecord => ({
  id: row.id,
  deploymentName: row.deployment_name,
  config: row.config,
  analysis: row.analysis,
  schema: row.schema,
  auth: row.auth,
  schemaError: row.schema_error,
});

/** Records a started push and its modules (not yet live). */
export async function insertPush(tx: SqlExecutor, push: PushRecord, modules: readonly PushedModule[]): Promise<void> {
  await tx.query(
    "insert into emulator_pushes (id, deployment_name, config, analysis, schema, auth, schema_error) values ($1, $2, $3, $4, $5, $6, $7)",
    [push.id, push.deploymentName, JSON.stringify(push.config), JSON.stringify(push.analysis), JSON.stringify(push.schema), JSON.stringify(push.auth), push.schemaError && JSON.stringify(push.schemaError)],
  );
  for (const pushedModule of modules) {
    await tx.query(
      "insert into emulator_modules (push_id, path, environment, source, source_map, sha256) values ($1, $2, $3, $4, $5, $6)",
      [push.id, pushedModule.path, pushedModule.environment, pushedModule.source, pushedModule.sourceMap ?? null, pushedModule.sha256],
    );
  }
}

/**
 * Makes a started push the deployment's live code and drops its other pushes; false when the push
 * is unknown (already finished, or replaced by a newer push).
 */
export async function finishPush(tx: SqlExecutor, deploymentName: string, pushId: string): Promise<boolean> {
  const { rowCount } = await tx.query("update emulator_pushes set finished_at = now() where id = $1 and deployment_name = $2 and finished_at is null", [pushId, deploymentName]);
  if (rowCount === 0) return false;
  await tx.query("delete from emulator_pushes where deployment_name = $1 and id <> $2", [deploymentName, pushId]);
  return true;
}

/** A push of the deployment: the live one by default, or a started one by id. */
export async function findPush(db: SqlExecutor, deploymentName: string, pushId?: string): Promise<PushRecord | null> {
  const { rows } = await db.query<PushRow>(
    `select id, deployment_name, config, analysis, schema, auth, schema_error from emulator_pushes
     where deployment_name = $1 and (case when $2::text is null then finished_at is not null else id = $2 end)`,
    [deploymentName, pushId ?? null],
  );
  return rows[0] ? toPush(rows[0]) : null;
}

/** The modules of a push, by path. */
export async function listPushModules(db: SqlExecutor, pushId: string): Promise<PushedModule[]> {
  const { rows } = await db.query<{ path: string; environment: PushedModule["environment"]; source: string; source_map: string | null; sha256: string }>(
    "select path, environment, source, source_map, sha256 from emulator_modules where push_id = $1 order by path",
    [pushId],
  );
  return rows.map((row) => ({ path: row.path, environment: row.environment, source: row.source, sourceMap: row.source_map ?? undefined, sha256: row.sha256 }));
}

/** The table of a stored document's id: convex-test's ids are a decimal counter, then the table's name. */
export const tableOfDocumentId = (id: string) => id.replace(/^\d+/, "");

/** A document write of a deployment's functions: the new value (convex JSON), or null when deleted. */
export type DocumentWrite = [id: string, value: unknown];

/** Every document of a deployment, as convex JSON. */
export async function listDocuments(db: SqlExecutor, deploymentName: string): Promise<DocumentWrite[]> {
  const { rows } = await db.query<{ id: string; value: unknown }>("select id, value from emulator_documents where deployment_name = $1 order by id", [deploymentName]);
  return rows.map((row) => [row.id, row.value]);
}

/** Applies committed writes in order. */
export async function applyDocumentWrites(tx: SqlExecutor, deploymentName: string, writes: readonly DocumentWrite[]): Promise<void> {
  for (const [id, value] of writes) {
    if (value === null) {
      await tx.query("delete from emulator_documents where deployment_name = $1 and id = $2", [deploymentName, id]);
    } else {
      await tx.query(
        `insert into emulator_documents (deployment_name, id, value) values ($1, $2, $3)
         on conflict (deployment_name, id) do update set value = excluded.value`,
        [deploymentName, id, JSON.stringify(value)],
      );
    }
  }
}

/** Documents per statement of {@link applyDocumentWritesInBatches}. */
const WRITE_BATCH = 1_000;

/**
 * Applies writes that name each id at most once after its deletion (an import: the replaced
 * documents, then the new ones), a batch per statement instead of one statement per document.
 */
export async function applyDocumentWritesInBatches(tx: SqlExecutor, deploymentName: string, writes: readonly DocumentWrite[]): Promise<void> {
  const deleted = writes.filter(([, value]) => value === null).map(([id]) => id);
  const written = writes.filter(([, value]) => value !== null);
  for (let start = 0; start < deleted.length; start += WRITE_BATCH) {
    await tx.query("delete from emulator_documents where deployment_name = $1 and id = any($2::text[])", [deploymentName, deleted.slice(start, start + WRITE_BATCH)]);
  }
  for (let start = 0; start < written.length; start += WRITE_BATCH) {
    await tx.query(
      `insert into emulator_documents (deployment_name, id, value)
       select $1, write->>0, write->1 from jsonb_array_elements($2::jsonb) as write
       on conflict (deployment_name, id) do update set value = excluded.value`,
      [deploymentName, JSON.stringify(written.slice(start, start + WRITE_BATCH))],
    );
  }
}

/** Deployments with scheduled functions still to run (their workers start with the server). */
export async function listDeploymentsWithPendingJobs(db: SqlExecutor): Promise<string[]> {
  const { rows } = await db.query<{ deployment_name: string }>(
    `select distinct deployment_name from emulator_documents
     where id like '%\\_scheduled\\_functions' and value->'state'->>'kind' = 'pending'`,
  );
  return rows.map((row) => row.deployment_name);
}

/** Records an upload URL's token (its digest) for one deployment. */
export async function insertUploadToken(db: SqlExecutor, deploymentName: string, token: string, issuedAt: Date): Promise<void> {
  await db.query("insert into emulator_storage_uploads (token_digest, deployment_name, issued_at) values ($1, $2, $3)", [digest(token), deploymentName, issuedAt]);
}

/** Removes an upload token of this deployment and returns when it was issued; null when unknown or already used. */
export async function consumeUploadToken(db: SqlExecutor, deploymentName: string, token: string): Promise<Date | null> {
  const { rows } = await db.query<{ issued_at: Date }>(
    "delete from emulator_storage_uploads where token_digest = $1 and deployment_name = $2 returning issued_at",
    [digest(token), deploymentName],
  );
  return rows[0] ? new Date(rows[0].issued_at) : null;
}

/** Forgets the upload tokens issued before `before` (they can no longer be used). */
export async function deleteUploadTokensBefore(db: SqlExecutor, before: Date): Promise<void> {
  await db.query("delete from emulator_storage_uploads where issued_at < $1", [before]);
}

/** One document of a deployment (convex JSON), or null. */
export async function findDocument(db: SqlExecutor, deploymentName: string, id: string): Promise<unknown> {
  const { rows } = await db.query<{ value: unknown }>("select value from emulator_documents where deployment_name = $1 and id = $2", [deploymentName, id]);
  return rows[0]?.value ?? null;
}

/** The `_storage` documents of a deployment (the files its functions stored). */
export async function listStorageDocuments(db: SqlExecutor, deploymentName: string): Promise<unknown[]> {
  const { rows } = await db.query<{ value: unknown }>("select value from emulator_documents where deployment_name = $1 and id like '%\\_storage'", [deploymentName]);
  return rows.map((row) => row.value);
}
