import { beforeAll, describe, expect, it } from "vitest";
import { GET as callbackRoute } from "@/app/backend/callback/route";
import { GET as listProjectsRoute, POST as createProjectRoute } from "@/app/api/projects/route";
import { isSameOriginRequest, SESSION_COOKIE } from "@/lib/auth";
import { reloadConfig } from "@/lib/config";
import { startSession } from "@/lib/session";
import { getStore } from "@/lib/store";
import { listProjects } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

// PUBLIC_BASE_URL defaults to http://localhost:3000 in tests.
const DASHBOARD = "http://localhost:3000";
const sessions = { SESSION_MAX_AGE_HOURS: 720, SESSION_IDLE_MINUTES: 10_080 };

let user: Awaited<ReturnType<typeof createTestUser>>;
let cookie: string;

beforeAll(async () => {
  delete process.env.PUBLIC_BASE_URL;
  reloadConfig();
  const db = await getStore();
  user = await createTestUser(db);
  cookie = `${SESSION_COOKIE}=${await startSession(db, user.user.id, sessions)}`;
});

const createProject = (headers: Record<string, string>, name: string) =>
  createProjectRoute(
    new Request(`${DASHBOARD}/api/projects`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ name }) }),
    undefined,
  );

const projectNames = async () => (await listProjects(await getStore(), user.user.id)).map((project) => project.name);

describe("the CSRF check of cookie-authenticated requests", () => {
  it("refuses a state change from another origin with 403 cross_site_request and changes nothing", async () => {
    const foreign: Record<string, string>[] = [
      { origin: "http://localhost:41000" },
      { origin: "http://localhost:41000", "sec-fetch-site": "same-site" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      {},
    ];
    for (const headers of foreign) {
      const response = await createProject({ cookie, ...headers }, "forged");
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: { code: "cross_site_request", message: expect.stringContaining("another site") } });
    }
    expect(await projectNames()).not.toContain("forged");
  });

  it("lets the dashboard's own origin change state, by Origin or by Sec-Fetch-Site", async () => {
    expect((await createProject({ cookie, origin: DASHBOARD }, "by origin")).status).toBe(201);
    expect((await createProject({ cookie, "sec-fetch-site": "same-origin" }, "by fetch metadata")).status).toBe(201);
    expect(await projectNames()).toEqual(expect.arrayContaining(["by origin", "by fetch metadata"]));
  });

  it("leaves bearer callers and safe methods alone", async () => {
    expect((await createProject({ ...user.headers, origin: "http://evil.example", cookie }, "bearer")).status).toBe(201);
    const listed = await listProjectsRoute(new Request(`${DASHBOARD}/api/projects`, { headers: { cookie, origin: "http://evil.example" } }), undefined);
    expect(listed.status).toBe(200);
  });

  it("is a pure function of method, Origin and Sec-Fetch-Site", () => {
    const request = (method: string, headers: Record<string, string> = {}) => new Request(`${DASHBOARD}/x`, { method, headers });
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(isSameOriginRequest(request(method), DASHBOARD)).toBe(true);
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(isSameOriginRequest(request(method), DASHBOARD)).toBe(false);
      expect(isSameOriginRequest(request(method, { origin: DASHBOARD }), DASHBOARD)).toBe(true);
      expect(isSameOriginRequest(request(method, { origin: `${DASHBOARD}.evil.example` }), DASHBOARD)).toBe(false);
      expect(isSameOriginRequest(request(method, { "sec-fetch-site": "same-origin" }), DASHBOARD)).toBe(true);
    }
  });
});

describe("the OAuth callback with a SameSite=Strict session cookie", () => {
  const callbackUrl = `${DASHBOARD}/backend/callback?state=s%22%3E%3Cscript%3E&code=c`;

  it("answers a cross-site arrival without the cookie with a page of ours that opens the same URL again", async () => {
    const response = await callbackRoute(new Request(callbackUrl, { headers: { "sec-fetch-site": "cross-site" } }), undefined);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('<meta http-equiv="refresh" content="0;url=/backend/callback?state=s%22%3E%3Cscript%3E&#38;code=c">');
    expect(html).not.toContain("<script");
  });

  it("still answers 401 to a caller that is not a cross-site navigation, and handles the call with the cookie", async () => {
    expect((await callbackRoute(new Request(callbackUrl), undefined)).status).toBe(401);
    const reentered = await callbackRoute(new Request(callbackUrl, { headers: { cookie, "sec-fetch-site": "same-origin" } }), undefined);
    // The state is unknown: authenticated, so the flow itself refused it.
    expect(reentered.status).toBe(400);
  });
});
