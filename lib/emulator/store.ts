import type { SqlExecutor } from "@/lib/store";
import { digest, randomSecret } from "./http";

/** Repositories of the emulator's tables (supabase/migrations/20261123000100_emulator.sql). */

export interface EmulatorTeam {
  id: number;
  slug: string;
  projectQuota: number | null;
}

export interface EmulatorProject {
  id: number;
  teamId: number;
  slug: string;
  name: string;
}

export interface EmulatorDeployment {
  name: string;
  projectId: number;
  deploymentType: "dev" | "prod";
  projectSlug: string;
  teamSlug: string;
}

interface TeamRow {
  id: number;
  slug: string;
  project_quota: number | null;
}

const toTeam = (row: TeamRow): EmulatorTeam => ({ id: row.id, slug: row.slug, projectQuota: row.project_quota });

/** Creates the team or rotates its token to `token` (the built-in team after a secrets-key change). */
export async function upsertTeam(db: SqlExecutor, input: { slug: string; token: string; projectQuota?: number | null }): Promise<EmulatorTeam> {
  const { rows } = await db.query<TeamRow>(
    `insert into emulator_teams (slug, name, token_hash, project_quota) values ($1, $1, $2, $3)
     on conflict (slug) do update set token_hash = excluded.token_hash, project_quota = excluded.project_quota
     returning id, slug, project_quota`,
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
    `select id, slug, project_quota from emulator_teams where token_hash = $1
     union all
     select t.id, t.slug, t.project_quota from emulator_oauth_tokens o join emulator_teams t on t.id = o.team_id
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

/** Inserts a project; null when the slug is taken on this team. */
export async function insertProject(tx: SqlExecutor, input: { teamId: number; slug: string; name: string }): Promise<EmulatorProject | null> {
  const { rows } = await tx.query<{ id: number; team_id: number; slug: string; name: string }>(
    `insert into emulator_projects (team_id, slug, name) values ($1, $2, $3)
     on conflict (team_id, slug) do nothing returning id, team_id, slug, name`,
    [input.teamId, input.slug, input.name],
  );
  return rows[0] ? { id: rows[0].id, teamId: rows[0].team_id, slug: rows[0].slug, name: rows[0].name } : null;
}

export async function findProject(db: SqlExecutor, teamId: number, where: { id: number } | { slug: string }): Promise<EmulatorProject | null> {
  const [column, value] = "id" in where ? ["id", where.id] : ["slug", where.slug];
  const { rows } = await db.query<{ id: number; team_id: number; slug: string; name: string }>(
    `select id, team_id, slug, name from emulator_projects where team_id = $1 and ${column} = $2`,
    [teamId, value],
  );
  return rows[0] ? { id: rows[0].id, teamId: rows[0].team_id, slug: rows[0].slug, name: rows[0].name } : null;
}

/** Deletes a project of a team (its deployments, keys and variables cascade); false when absent. */
export async function deleteProject(db: SqlExecutor, teamId: number, projectId: number): Promise<boolean> {
  const { rowCount } = await db.query("delete from emulator_projects where team_id = $1 and id = $2", [teamId, projectId]);
  return rowCount > 0;
}

/** Inserts a deployment; false when the name is taken or the project already has one of this type. */
export async function insertDeployment(tx: SqlExecutor, input: { name: string; projectId: number; deploymentType: "dev" | "prod" }): Promise<boolean> {
  const { rowCount } = await tx.query(
    "insert into emulator_deployments (name, project_id, deployment_type) values ($1, $2, $3) on conflict do nothing",
    [input.name, input.projectId, input.deploymentType],
  );
  return rowCount > 0;
}

interface DeploymentRow {
  name: string;
  project_id: number;
  deployment_type: "dev" | "prod";
  project_slug: string;
  team_slug: string;
}

const DEPLOYMENT_SELECT = `select d.name, d.project_id, d.deployment_type, p.slug as project_slug, t.slug as team_slug
  from emulator_deployments d join emulator_projects p on p.id = d.project_id join emulator_teams t on t.id = p.team_id`;

const toDeployment = (row: DeploymentRow): EmulatorDeployment => ({
  name: row.name,
  projectId: row.project_id,
  deploymentType: row.deployment_type,
  projectSlug: row.project_slug,
  teamSlug: row.team_slug,
});

export async function findDeployment(db: SqlExecutor, where: { name: string } | { projectId: number; deploymentType: "dev" | "prod" }): Promise<EmulatorDeployment | null> {
  const { rows } =
    "name" in where
      ? await db.query<DeploymentRow>(`${DEPLOYMENT_SELECT} where d.name = $1`, [where.name])
      : await db.query<DeploymentRow>(`${DEPLOYMENT_SELECT} where d.project_id = $1 and d.deployment_type = $2`, [where.projectId, where.deploymentType]);
  return rows[0] ? toDeployment(rows[0]) : null;
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

/** Applies variable changes; a null value removes the variable. */
export async function applyEnvChanges(tx: SqlExecutor, deploymentName: string, changes: { name: string; value: string | null }[]): Promise<void> {
  for (const change of changes) {
    if (change.value === null) {
      await tx.query("delete from emulator_env_vars where deployment_name = $1 and name = $2", [deploymentName, change.name]);
    } else {
      await tx.query(
        `insert into emulator_env_vars (deployment_name, name, value) values ($1, $2, $3)
         on conflict (deployment_name, name) do update set value = excluded.value, updated_at = now()`,
        [deploymentName, change.name, change.value],
      );
    }
  }
}

export async function getEnvVar(db: SqlExecutor, deploymentName: string, name: string): Promise<string | null> {
  const { rows } = await db.query<{ value: string }>("select value from emulator_env_vars where deployment_name = $1 and name = $2", [deploymentName, name]);
  return rows[0]?.value ?? null;
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
