import { getSecretBox, type SecretBox } from "@/lib/secrets";
import { isUuid } from "./ids";
import type { SqlExecutor } from "./port";

/** Spec 2.6 plus the numeric backend project id; secrets in plain text, server-side only. */
export interface BackendCredentials {
  projectId: string;
  userId: string;
  mode: "oauth" | "managed";
  teamSlug: string;
  projectSlug: string;
  deploymentUrl: string;
  deploymentName: string;
  adminKey: string;
  accessToken: string | null;
  backendProjectId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export type BackendCredentialsInput = Omit<BackendCredentials, "createdAt" | "updatedAt">;

interface CredentialsRow {
  project_id: string;
  user_id: string;
  mode: "oauth" | "managed";
  team_slug: string;
  project_slug: string;
  deployment_url: string;
  deployment_name: string;
  admin_key: string;
  access_token: string | null;
  backend_project_id: number | null;
  created_at: Date;
  updated_at: Date;
}

// Each ciphertext is bound to its column and project, so values cannot be swapped between rows.
const adminKeyContext = (projectId: string) => `backend_project_credentials.admin_key:${projectId}`;
const accessTokenContext = (projectId: string) => `backend_project_credentials.access_token:${projectId}`;

/** Inserts or replaces the credentials of a project, encrypting the admin key and access token. */
export async function upsertCredentials(
  db: SqlExecutor,
  input: BackendCredentialsInput,
  box: SecretBox = getSecretBox(),
): Promise<void> {
  await db.query(
    `insert into backend_project_credentials
       (project_id, user_id, mode, team_slug, project_slug, deployment_url, deployment_name,
        admin_key, access_token, backend_project_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (project_id) do update set
       user_id = excluded.user_id, mode = excluded.mode, team_slug = excluded.team_slug,
       project_slug = excluded.project_slug, deployment_url = excluded.deployment_url,
       deployment_name = excluded.deployment_name, admin_key = excluded.admin_key,
       access_token = excluded.access_token, backend_project_id = excluded.backend_project_id,
       updated_at = now()`,
    [
      input.projectId,
      input.userId,
      input.mode,
      input.teamSlug,
      input.projectSlug,
      input.deploymentUrl,
      input.deploymentName,
      box.encrypt(input.adminKey, adminKeyContext(input.projectId)),
      input.accessToken === null ? null : box.encrypt(input.accessToken, accessTokenContext(input.projectId)),
      input.backendProjectId,
    ],
  );
}

/** The decrypted credentials of a project, or null. Never send the result to a client. */
export async function getCredentials(
  db: SqlExecutor,
  projectId: string,
  box: SecretBox = getSecretBox(),
): Promise<BackendCredentials | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<CredentialsRow>("select * from backend_project_credentials where project_id = $1", [
    projectId,
  ]);
  const row = rows[0];
  if (!row) return null;
  return {
    projectId: row.project_id,
    userId: row.user_id,
    mode: row.mode,
    teamSlug: row.team_slug,
    projectSlug: row.project_slug,
    deploymentUrl: row.deployment_url,
    deploymentName: row.deployment_name,
    adminKey: box.decrypt(row.admin_key, adminKeyContext(row.project_id)),
    accessToken: row.access_token === null ? null : box.decrypt(row.access_token, accessTokenContext(row.project_id)),
    backendProjectId: row.backend_project_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function deleteCredentials(db: SqlExecutor, projectId: string): Promise<boolean> {
  if (!isUuid(projectId)) return false;
  const { rowCount } = await db.query("delete from backend_project_credentials where project_id = $1", [projectId]);
  return rowCount > 0;
}
