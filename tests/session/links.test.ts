import { afterEach, describe, expect, it, vi } from "vitest";
import { GET as listProjectsRoute } from "@/app/api/projects/route";
import { hashApiToken, SESSION_COOKIE } from "@/lib/auth";
import { announceSignInLink, createSignInLink, isSignInLinkUsable, redeemSignInLink, signInWithLinkToken } from "@/lib/session";
import { getStore } from "@/lib/store";
import { insertApiToken } from "@/lib/store/users";
import { createTestUser } from "../helpers/users";

const baseUrl = "http://localhost:3000";
const sessions = { SESSION_MAX_AGE_HOURS: 720, SESSION_IDLE_MINUTES: 10_080 };
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
    expect(await isSignInLinkUsable(db, tokenOf(expired.url))).toBe(false);
    expect(await redeemSignInLink(db, "cbsl_unknown")).toBeNull();
    // An API token is not a link token, even though both are stored as SHA-256 digests.
    expect(await redeemSignInLink(db, apiToken)).toBeNull();
    expect(await isSignInLinkUsable(db, apiToken)).toBe(false);
  });

  it("survive any number of checks (what opening the link's page does), and are used up only by signing in", async () => {
    const db = await getStore();
    const { user } = await createTestUser(db);
    const link = await createSignInLink(db, user.id, { baseUrl });
    for (let look = 0; look < 3; look += 1) expect(await isSignInLinkUsable(db, tokenOf(link.url))).toBe(true);

    const session = await signInWithLinkToken(db, tokenOf(link.url), sessions);
    expect(session).toMatch(/^cbs_/);
    const projects = await listProjectsRoute(new Request(`${baseUrl}/api/projects`, { headers: { cookie: `${SESSION_COOKIE}=${session}` } }), undefined);
    expect(projects.status).toBe(200);

    expect(await isSignInLinkUsable(db, tokenOf(link.url))).toBe(false);
    expect(await signInWithLinkToken(db, tokenOf(link.url), sessions)).toBeNull();
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
