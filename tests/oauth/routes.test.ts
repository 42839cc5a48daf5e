import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { GET as callbackRoute } from "@/app/backend/callback/route";
import { GET as connectRoute } from "@/app/backend/connect/route";
import { reloadConfig } from "@/lib/config";
import { getStore, type Sql } from "@/lib/store";
import { insertProject, setBackendProject, updateProjectSandbox, type Project } from "@/lib/store/projects";
import { createTestUser } from "../helpers/users";

// The routes' own answers before any backend is called; the flow itself is in flow.test.ts.
let db: Sql;
let owner: Awaited<ReturnType<typeof createTestUser>>;

const HOSTED_OAUTH = {
  BACKEND_PROVIDER: "hosted",
  BACKEND_OAUTH_CLIENT_ID: "client-123",
  BACKEND_OAUTH_CLIENT_SECRET: "client-secret-value",
  DASHBOARD_HOST: "https://dashboard.example.test",
  PUBLIC_BASE_URL: "https://builder.example.test/",
};

function useEnv(env: Record<string, string>) {
  Object.assign(process.env, env);
  reloadConfig();
}

const get = (handler: typeof connectRoute, url: string, headers: Record<string, string> = owner.headers) =>
  handler(new Request(url, { headers }), undefined);
const connect = (projectId: string | null, headers?: Record<string, string>) =>
  get(connectRoute, `http://localhost/backend/connect${projectId === null ? "" : `?projectId=${projectId}`}`, headers);

async function projectWithSandbox(): Promise<Project> {
  const project = await insertProject(db, { ownerId: owner.user.id, name: "app" });
  await updateProjectSandbox(db, project.id, { sandboxId: "sandbox-1", previewUrl: null });
  return project;
}

beforeAll(async () => {
  db = await getStore();
  owner = await createTestUser(db);
});
afterEach(() => {
  for (const name of Object.keys(HOSTED_OAUTH)) delete process.env[name];
  reloadConfig();
});

describe("GET /backend/connect", () => {
  it("redirects to the configured dashboard's consent page with our redirect URI, a state and a PKCE challenge", async () => {
    useEnv(HOSTED_OAUTH);
    const project = await projectWithSandbox();
    const response = await connect(project.id);
    expect(response.status).toBe(302);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const location = new URL(response.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("https://dashboard.example.test/oauth/authorize/team");
    expect(Object.fromEntries(location.searchParams)).toEqual({
      client_id: "client-123",
      redirect_uri: "https://builder.example.test/backend/callback",
      response_type: "code",
      state: expect.stringMatching(/^[\w-]{43}\.[0-9a-z]+\.[\w-]{43}$/),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: "S256",
    });
    expect(location.toString()).not.toContain("client-secret-value");
  });

  it("answers 503 when no OAuth app is configured", async () => {
    useEnv({ BACKEND_PROVIDER: "hosted" });
    const response = await connect((await projectWithSandbox()).id);
    expect(response.status).toBe(503);
    expect((await response.json()).error.code).toBe("backend_oauth_not_configured");
  });

  it("answers 401, 400 and 404 for no caller, no projectId and someone else's project", async () => {
    const project = await projectWithSandbox();
    expect((await connect(project.id, {})).status).toBe(401);
    expect((await connect(null)).status).toBe(400);
    const stranger = await createTestUser(db, "Stranger");
    expect((await connect(project.id, stranger.headers)).status).toBe(404);
  });

  it("answers 409 for a connected project; a project without a sandbox yet may start", async () => {
    const connected = await projectWithSandbox();
    await setBackendProject(db, connected.id, {
      kind: "connected",
      projectSlug: "p",
      teamSlug: "t",
      deploymentUrl: "https://d.example.test",
      deploymentName: "d",
    });
    const already = await connect(connected.id);
    expect(already.status).toBe(409);
    expect((await already.json()).error.code).toBe("already_connected");
    const bare = await insertProject(db, { ownerId: owner.user.id, name: "bare" });
    // Its sandbox is created on first use, by the callback's sandbox steps.
    expect((await connect(bare.id)).status).toBe(302);
  });
});

describe("GET /backend/callback", () => {
  it("answers 400 without a state or without both code and error, before anything is looked up", async () => {
    expect((await get(callbackRoute, "http://localhost/backend/callback?code=abc")).status).toBe(400);
    const noCode = await get(callbackRoute, "http://localhost/backend/callback?state=abc");
    expect(noCode.status).toBe(400);
    expect((await noCode.json()).error.message).toContain("code or error is required");
    expect((await get(callbackRoute, "http://localhost/backend/callback?state=abc&code=x", {})).status).toBe(401);
  });
});
