import crypto from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as getHealth } from "@/app/api/health/route";
import { GET as getProjectRoute } from "@/app/api/projects/[id]/route";
import { GET as listProjectsRoute, POST as createProjectRoute } from "@/app/api/projects/route";
import { SESSION_COOKIE } from "@/lib/auth";
import { seedDemoIfEmpty } from "@/lib/auth/seed";
import { reloadConfig } from "@/lib/config";
import { getStore } from "@/lib/store";
import { upsertCredentials } from "@/lib/store/credentials";
import { createTestUser } from "../helpers/users";

const BASE = "http://localhost:3000";
const JWT_SECRET = "test-supabase-jwt-secret-with-enough-length";

const call = (handler: (req: Request, ctx: never) => Promise<Response>, path: string, init?: RequestInit, params?: object) =>
  handler(new Request(BASE + path, init), { params: Promise.resolve(params ?? {}) } as never);

describe("projects API", () => {
  let a: Awaited<ReturnType<typeof createTestUser>>;
  let b: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    process.env.SUPABASE_JWT_SECRET = JWT_SECRET;
    reloadConfig();
    const db = await getStore();
    a = await createTestUser(db, "A");
    b = await createTestUser(db, "B");
  });

  it("reports health with the store kind", async () => {
    const response = await call(getHealth, "/api/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, store: "pglite" });
  });

  it("answers 401 with the JSON error shape without a valid token", async () => {
    for (const headers of [{}, { authorization: "Bearer cbs_wrong" }, { authorization: "Basic abc" }] as Record<string, string>[]) {
      const response = await call(listProjectsRoute, "/api/projects", { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    }
  });

  it("creates, lists and reads a project", async () => {
    const created = await call(createProjectRoute, "/api/projects", {
      method: "POST",
      headers: { ...a.headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "  My app  " }),
    });
    expect(created.status).toBe(201);
    const project = await created.json();
    expect(project).toMatchObject({ id: expect.any(String), name: "My app", backendProject: null });

    const list = await (await call(listProjectsRoute, "/api/projects", { headers: a.headers })).json();
    expect(list.projects.map((p: { id: string }) => p.id)).toContain(project.id);

    const read = await call(getProjectRoute, `/api/projects/${project.id}`, { headers: a.headers }, { id: project.id });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(project);
  });

  it("rejects bad bodies with 400", async () => {
    for (const body of ["not json", JSON.stringify({}), JSON.stringify({ name: "" }), JSON.stringify({ name: "x".repeat(101) })]) {
      const response = await call(createProjectRoute, "/api/projects", { method: "POST", headers: { ...a.headers, "content-type": "application/json" }, body });
      expect(response.status).toBe(400);
      expect((await response.json()).error.code).toMatch(/invalid_/);
    }
  });

  it("hides other users' projects behind the same 404 as missing ones", async () => {
    const created = await (
      await call(createProjectRoute, "/api/projects", { method: "POST", headers: { ...a.headers, "content-type": "application/json" }, body: JSON.stringify({ name: "secret" }) })
    ).json();
    const foreign = await call(getProjectRoute, `/api/projects/${created.id}`, { headers: b.headers }, { id: created.id });
    const missing = await call(getProjectRoute, `/api/projects/${crypto.randomUUID()}`, { headers: b.headers }, { id: crypto.randomUUID() });
    const malformed = await call(getProjectRoute, "/api/projects/nope", { headers: b.headers }, { id: "nope" });
    for (const response of [foreign, missing, malformed]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { code: "project_not_found", message: "Project not found." } });
    }
    const listB = await (await call(listProjectsRoute, "/api/projects", { headers: b.headers })).json();
    expect(listB.projects).toEqual([]);
  });

  it("never includes credentials in project responses", async () => {
    const created = await (
      await call(createProjectRoute, "/api/projects", { method: "POST", headers: { ...a.headers, "content-type": "application/json" }, body: JSON.stringify({ name: "creds" }) })
    ).json();
    await upsertCredentials(await getStore(), {
      projectId: created.id,
      userId: a.user.id,
      mode: "managed",
      teamSlug: "t",
      projectSlug: "p",
      deploymentUrl: "https://d.example",
      deploymentName: "d",
      adminKey: "project:t:p|very-secret-admin-key",
      accessToken: null,
      backendProjectId: 1,
    });
    const text = await (await call(getProjectRoute, `/api/projects/${created.id}`, { headers: a.headers }, { id: created.id })).text();
    expect(text).not.toContain("very-secret-admin-key");
    expect(text).not.toContain("adminKey");
  });

  it("accepts the session cookie", async () => {
    const response = await call(listProjectsRoute, "/api/projects", { headers: { cookie: `other=1; ${SESSION_COOKIE}=${a.token}` } });
    expect(response.status).toBe(200);
  });

  it("accepts a Supabase Auth JWT and creates the user on first sight", async () => {
    const sub = crypto.randomUUID();
    const sign = (secret: string, audience = "authenticated") =>
      new SignJWT({ email: "supa@example.com", role: "authenticated" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(sub)
        .setAudience(audience)
        .setExpirationTime("5m")
        .sign(new TextEncoder().encode(secret));
    const ok = await call(listProjectsRoute, "/api/projects", { headers: { authorization: `Bearer ${await sign(JWT_SECRET)}` } });
    expect(ok.status).toBe(200);
    const wrongSecret = await call(listProjectsRoute, "/api/projects", {
      headers: { authorization: `Bearer ${await sign("another-secret-another-secret-xx")}` },
    });
    expect(wrongSecret.status).toBe(401);
    const wrongAudience = await call(listProjectsRoute, "/api/projects", {
      headers: { authorization: `Bearer ${await sign(JWT_SECRET, "anon")}` },
    });
    expect(wrongAudience.status).toBe(401);
  });

  it("does not seed a store that already has users", async () => {
    const db = await getStore();
    expect(await seedDemoIfEmpty(db)).toBeNull();
  });
});
