import { describe, expect, it } from "vitest";
import { authenticate, hashApiToken, SESSION_COOKIE } from "@/lib/auth";
import { parseConfig } from "@/lib/config";
import { createSignInLink, endAllSessions, endSession, sessionCookie, signInWithLinkToken, startSession } from "@/lib/session";
import { getStore } from "@/lib/store";
import { createTestUser } from "../helpers/users";

const baseUrl = "http://localhost:3000";
const sessions = { SESSION_MAX_AGE_HOURS: 720, SESSION_IDLE_MINUTES: 10_080 };
const asBearer = (token: string) => authenticate(new Request(baseUrl, { headers: { authorization: `Bearer ${token}` } }));
const asCookie = (token: string) => authenticate(new Request(baseUrl, { headers: { cookie: `${SESSION_COOKIE}=${token}` } }));

/** Moves the given timestamps of a token back by `hours`. */
async function backdate(token: string, columns: ("created_at" | "last_used_at")[], hours: number): Promise<void> {
  const db = await getStore();
  const assignments = columns.map((column) => `${column} = ${column} - make_interval(hours => $2)`).join(", ");
  const { rowCount } = await db.query(`update api_tokens set ${assignments} where token_hash = $1`, [hashApiToken(token), hours]);
  expect(rowCount).toBe(1);
}

describe("dashboard sessions", () => {
  it("sign-out revokes the session token but never the user's own API tokens", async () => {
    const db = await getStore();
    const { user, token: apiToken } = await createTestUser(db);
    const session = await startSession(db, user.id, sessions);
    expect((await asBearer(session))?.id).toBe(user.id);

    await endSession(db, apiToken);
    await endSession(db, session);
    expect(await asBearer(session)).toBeNull();
    expect((await asBearer(apiToken))?.id).toBe(user.id);
  });

  it("a session back-dated 400 days does not work, while an API token of that age still does", async () => {
    const db = await getStore();
    const { user, token: apiToken } = await createTestUser(db);
    const session = await startSession(db, user.id, sessions);
    await asCookie(session);
    await backdate(session, ["created_at", "last_used_at"], 400 * 24);
    await backdate(apiToken, ["created_at"], 400 * 24);
    expect(await asCookie(session)).toBeNull();
    expect(await asBearer(session)).toBeNull();
    expect((await asBearer(apiToken))?.id).toBe(user.id);
  });

  it("ends after the idle timeout, counted from the last request", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const session = await startSession(db, user.id, { SESSION_MAX_AGE_HOURS: 720, SESSION_IDLE_MINUTES: 60 * 24 });
    expect((await asCookie(session))?.id).toBe(user.id);
    // Used 23 hours ago: still alive, and this use restarts the idle clock.
    await backdate(session, ["created_at", "last_used_at"], 23);
    expect((await asCookie(session))?.id).toBe(user.id);
    await backdate(session, ["last_used_at"], 25);
    expect(await asCookie(session)).toBeNull();
  });

  it("ends at its absolute maximum age however busy it is", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const session = await startSession(db, user.id, { SESSION_MAX_AGE_HOURS: 2, SESSION_IDLE_MINUTES: 10_080 });
    expect((await asCookie(session))?.id).toBe(user.id);
    // Created 3 hours ago, used a moment ago.
    await backdate(session, ["created_at"], 3);
    expect(await asCookie(session)).toBeNull();
  });

  it("rotates on sign-in: a new token each time, and the cookie presented at sign-in stops working", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const first = await startSession(db, user.id, sessions);
    const link = await createSignInLink(db, user.id, { baseUrl });
    const second = await signInWithLinkToken(db, new URL(link.url).searchParams.get("token")!, sessions, first);
    expect(second).not.toBeNull();
    expect(second).not.toBe(first);
    expect(await asCookie(first)).toBeNull();
    expect((await asCookie(second!))?.id).toBe(user.id);
    const third = await startSession(db, user.id, sessions, { replacing: second });
    expect(await asCookie(second!)).toBeNull();
    expect((await asCookie(third))?.id).toBe(user.id);
  });

  it("purges the user's dead sessions at sign-in", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const stale = await startSession(db, user.id, sessions);
    await backdate(stale, ["created_at"], 400 * 24);
    await startSession(db, user.id, sessions);
    const { rows } = await db.query("select 1 from api_tokens where token_hash = $1", [hashApiToken(stale)]);
    expect(rows).toHaveLength(0);
  });

  it("signing out everywhere ends every session of the user, and only sessions", async () => {
    const db = await getStore();
    const { user, token: apiToken } = await createTestUser(db);
    const other = await createTestUser(db);
    const browsers = [await startSession(db, user.id, sessions), await startSession(db, user.id, sessions)];
    const othersSession = await startSession(db, other.user.id, sessions);
    expect(await endAllSessions(db, user.id)).toBe(2);
    for (const session of browsers) expect(await asCookie(session)).toBeNull();
    expect((await asBearer(apiToken))?.id).toBe(user.id);
    expect((await asCookie(othersSession))?.id).toBe(other.user.id);
  });

  it("is a SameSite=Strict, HttpOnly cookie that lives as long as the server keeps the session", () => {
    const config = parseConfig({ SESSION_MAX_AGE_HOURS: "12", SESSION_IDLE_MINUTES: "30" });
    expect(config).toMatchObject({ SESSION_MAX_AGE_HOURS: 12, SESSION_IDLE_MINUTES: 30 });
    expect(parseConfig({})).toMatchObject({ SESSION_MAX_AGE_HOURS: 720, SESSION_IDLE_MINUTES: 10_080 });
    expect(() => parseConfig({ SESSION_IDLE_MINUTES: "0" })).toThrow(/SESSION_IDLE_MINUTES/);
    expect(sessionCookie("cbs_x", config)).toMatchObject({ httpOnly: true, sameSite: "strict", secure: false, maxAge: 12 * 3600 });
    expect(sessionCookie("cbs_x", { ...config, PUBLIC_BASE_URL: "https://cbs.example" }).secure).toBe(true);
  });
});
