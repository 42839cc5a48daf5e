import { getConfig } from "@/lib/config";
import { NotFoundError, UnauthorizedError } from "@/lib/errors";
import { getStore } from "@/lib/store";
import { isUuid } from "@/lib/store/ids";
import { getOwnedProject, type Project } from "@/lib/store/projects";
import { ensureUser, findUserByTokenHash, type User } from "@/lib/store/users";
import { isSameOriginRequest, originOf } from "./csrf";
import { CrossSiteRequestError, EmailInUseError } from "./errors";
import { supabaseAuthEnabled, verifySupabaseJwt } from "./supabase";
import { hashApiToken } from "./tokens";

export { isSameOriginRequest } from "./csrf";
export { CrossSiteRequestError, EmailInUseError } from "./errors";
export { generateApiToken, hashApiToken } from "./tokens";

/** Name of the dashboard session cookie; its value is an API token of the user. */
export const SESSION_COOKIE = "cbs_session";

function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match ? match[1] : null;
}

function cookieToken(request: Request): string | null {
  const cookies = request.headers.get("cookie");
  if (!cookies) return null;
  for (const part of cookies.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return decodeURIComponent(value.join("="));
  }
  return null;
}

const looksLikeJwt = (token: string) => token.split(".").length === 3;

/**
 * The calling user, from a bearer API token, the session cookie, or a Supabase Auth JWT. A
 * cookie-authenticated request that changes state must come from the dashboard's own origin
 * ({@link CrossSiteRequestError}, 403); bearer callers are not browsers acting on their own.
 * A Supabase user whose email belongs to another user is refused ({@link EmailInUseError}, 409).
 */
export async function authenticate(request: Request): Promise<User | null> {
  const bearer = bearerToken(request);
  const token = bearer ?? cookieToken(request);
  if (!token) return null;
  if (!bearer && !isSameOriginRequest(request, originOf(getConfig().PUBLIC_BASE_URL))) throw new CrossSiteRequestError();
  const db = await getStore();
  if (looksLikeJwt(token)) {
    if (!supabaseAuthEnabled()) return null;
    const identity = await verifySupabaseJwt(token);
    if (!identity || !isUuid(identity.id)) return null;
    const user = await ensureUser(db, { id: identity.id, email: identity.email, name: identity.email ?? "Supabase user" });
    if (!user) throw new EmailInUseError();
    return user;
  }
  return findUserByTokenHash(db, hashApiToken(token));
}

export async function requireUser(request: Request): Promise<User> {
  const user = await authenticate(request);
  if (!user) throw new UnauthorizedError();
  return user;
}

/**
 * The caller and the project, when the caller owns it. Unauthenticated → 401; a project that
 * does not exist or belongs to someone else → the same 404, so existence is never revealed.
 */
export async function requireProjectOwner(request: Request, projectId: string): Promise<{ user: User; project: Project }> {
  const user = await requireUser(request);
  return { user, project: await requireOwnedProject(user, projectId) };
}

/** The project when `user` owns it; otherwise the same 404 as a missing project. */
export async function requireOwnedProject(user: User, projectId: string): Promise<Project> {
  const project = await getOwnedProject(await getStore(), projectId, user.id);
  if (!project) throw new NotFoundError("Project not found.", "project_not_found");
  return project;
}
