import crypto from "node:crypto";
import type { Config } from "@/lib/config";
import { getSecretsKey } from "@/lib/secrets";

/** Where the emulator is mounted, in this app (app/emulator/[...path]) and in its own server. */
export const EMULATOR_MOUNT_PATH = "/emulator";
/** Sub-path of the mount standing for the dashboard host (OAuth consent page). */
export const EMULATOR_DASHBOARD_PREFIX = "/dashboard";

/** Slug of the team every embedded installation has; managed projects are created on it. */
const EMULATOR_TEAM_SLUG = "local-team";
/** Client id of the emulator's built-in OAuth application. */
const EMULATOR_OAUTH_CLIENT_ID = "local-oauth-app";

/**
 * The emulator's built-in credentials. They are derived from the installation's secrets key
 * (HMAC), so they are stable across restarts, differ per installation, and are known to the
 * product without being stored anywhere in plain text.
 */
export interface EmulatorIdentity {
  teamSlug: string;
  /** Team-scoped token of the built-in team (secret). */
  teamToken: string;
  oauthClientId: string;
  /** Client secret of the built-in OAuth app (secret). */
  oauthClientSecret: string;
  /** Guards fault injection (`X-Emulator-Admin-Secret`). */
  adminSecret: string;
}

const cache = new Map<string, EmulatorIdentity>();

/** The built-in identity of the emulator for this configuration's secrets key. */
export function getEmulatorIdentity(config: Pick<Config, "SECRETS_KEY" | "DATA_DIR">): EmulatorIdentity {
  const cacheKey = config.SECRETS_KEY ? `key:${config.SECRETS_KEY}` : `dir:${config.DATA_DIR}`;
  let identity = cache.get(cacheKey);
  if (!identity) {
    const key = getSecretsKey(config);
    const derive = (label: string) => crypto.createHmac("sha256", key).update(`emulator:${label}:v1`).digest("base64url");
    identity = {
      teamSlug: EMULATOR_TEAM_SLUG,
      teamToken: `emu_team_${derive("team-token")}`,
      oauthClientId: EMULATOR_OAUTH_CLIENT_ID,
      oauthClientSecret: `emu_secret_${derive("oauth-client-secret")}`,
      adminSecret: `emu_admin_${derive("admin-secret")}`,
    };
    cache.set(cacheKey, identity);
  }
  return identity;
}
