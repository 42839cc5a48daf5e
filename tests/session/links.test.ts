import { afterEach, describe, expect, it, vi } from "vitest";
import { GET as listProjectsRoute } from "@/app/api/projects/route";
import { GET as openSignInLink } from "@/app/signin/link/route";
import { authenticate, hashApiToken, SESSION_COOKIE } from "@/lib/auth";
import { announceSignInLink, createSignInLink, endSession, redeemSignInLink, startSession } from "@/lib/session";
import { getStore } from "@/lib/store";
import { insertApiToken } from "@/lib/store/users";
import { createTestUser } from "../helpers/users";

const baseUrl = "http://localhost:3000";
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("one-time sign-in links", () => {
  it("redeem exactly once, stored only as a digest", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const link = await createSignInLink(db, user.id, { baseUrl });
    expect(link.url).toMatch(/^http:\/\/localhost:3000\/signin\/link\?token=cbsl_[A-Za-z0-9_-]{43}$/);
    expect(link.expiresAt.getTime()).toBeGreaterThan(Date.now());

    const { rows } = await db.query<{ token_hash: string }>("select token_hash from signin_links where user_id = $1", [user.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(hashApiToken(tokenOf(link.url)));

    const [first, second] = await Promise.all([redeemSignInLink(db, tokenOf(link.url)), redeemSignInLink(db, tokenOf(link.url))]);
    expect([first, second].sort()).toEqual([null, user.id].sort());
    expect(await redeemSignInLink(db, tokenOf(link.url))).toBeNull();
  });

  it("refuse expired, unknown and foreign-shaped tokens", async () => {
    const db = await getStore();
    const { user, token: apiToken } = await createTestUser(db);
    const expired = await createSignInLink(db, user.id, { baseUrl, ttlMs: 0 });
    expect(await redeemSignInLink(db, tokenOf(expired.url))).toBeNull();
    expect(await redeemSignInLink(db, "cbsl_unknown")).toBeNull();
    // An API token is not a link token, even though both are stored as SHA-256 digests.
    expect(await redeemSignInLink(db, apiToken)).toBeNull();
  });

  it("open as a session cookie that authenticates the API, then stop working", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const link = await createSignInLink(db, user.id, { baseUrl });

    const opened = await openSignInLink(new Request(link.url));
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(`${baseUrl}/projects`);
    expect(opened.headers.get("cache-control")).toBe("no-store");
    const cookie = opened.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=cbs_`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=lax/i);
    expect(cookie).not.toMatch(/Secure/i);

    const session = cookie.split(";")[0];
    const projects = await listProjectsRoute(new Request(`${baseUrl}/api/projects`, { headers: { cookie: session } }), undefined);
    expect(projects.status).toBe(200);

    const reused = await openSignInLink(new Request(link.url));
    expect(reused.headers.get("location")).toBe(`${baseUrl}/signin?error=link`);
    expect(reused.headers.get("set-cookie")).toBeNull();
  });
});

describe("dashboard sessions", () => {
  it("sign-out revokes the session token but never the user's own API tokens", async () => {
    const db = await getStore();
    const { user, token: apiToken } = await createTestUser(db);
    const session = await startSession(db, user.id);
    const asCaller = (token: string) => authenticate(new Request(baseUrl, { headers: { authorization: `Bearer ${token}` } }));
    expect((await asCaller(session))?.id).toBe(user.id);

    await endSession(db, apiToken);
    await endSession(db, session);
    expect(await asCaller(session)).toBeNull();
    expect((await asCaller(apiToken))?.id).toBe(user.id);
  });
});

describe("start-up announcement", () => {
  it("prints a working link for the demo user, and nothing without one", async () => {
    const db = await getStore();
    const printed = vi.spyOn(console, "log").mockImplementation(() => undefined);
    expect(await announceSignInLink(db, { PUBLIC_BASE_URL: baseUrl })).toBeNull();
    expect(printed).not.toHaveBeenCalled();

    const { user } = await createTestUser(db, "Demo user");
    await insertApiToken(db, { userId: user.id, tokenHash: "0".repeat(64), label: "demo" });
    const url = await announceSignInLink(db, { PUBLIC_BASE_URL: baseUrl });
    expect(url).not.toBeNull();
    expect(printed.mock.calls.flat().join("\n")).toContain(url!);
    expect(await redeemSignInLink(db, tokenOf(url!))).toBe(user.id);
  });
});
