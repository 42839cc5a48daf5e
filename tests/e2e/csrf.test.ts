import crypto from "node:crypto";
import type { Browser, HTTPResponse, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MAX_UPLOAD_BYTES } from "@/lib/assets/multipart";
import { startHttpServer } from "../helpers/http-server";
import { launchBrowser, saveArtifact } from "./browser";
import { startProductServer, type ProductServer } from "./server";

// A first build on two busy cores takes minutes; later runs reuse `.next`.
const START_TIMEOUT_MS = 10 * 60_000;
const STEP_TIMEOUT_MS = 90_000;

let server: ProductServer;
let browser: Browser;
let dashboard: Page;
/** The other site: a page server on another port of the same host, serving whatever a test puts in `pages`. */
let attacker: Awaited<ReturnType<typeof startHttpServer>>;
const pages = new Map<string, string>();
let projectId: string;

interface Answer {
  status: number;
  body: unknown;
}

/** Calls the API from the dashboard's own page, as its scripts do (same origin, session cookie). */
async function fromDashboard(path: string, init: { method?: string; json?: unknown; contentType?: string } = {}): Promise<Answer> {
  return dashboard.evaluate(
    async (url, method, body, contentType) => {
      const response = await fetch(url, { method, headers: body === undefined ? {} : { "content-type": contentType }, body });
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    path,
    init.method ?? (init.json === undefined ? "GET" : "POST"),
    init.json === undefined ? undefined : JSON.stringify(init.json),
    init.contentType ?? "application/json",
  );
}

/** Opens a page of the other site and collects every answer the dashboard's server gave it. */
async function visitAttackerPage(origin: string, html: string): Promise<{ page: Page; answers: HTTPResponse[] }> {
  const name = `/${crypto.randomUUID()}`;
  pages.set(name, html);
  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  const answers: HTTPResponse[] = [];
  page.on("response", (response) => {
    if (response.url().startsWith(server.baseUrl)) answers.push(response);
  });
  await page.goto(`${origin}${name}`);
  return { page, answers };
}

const backendOf = async () => ((await fromDashboard(`/api/backend/status?projectId=${projectId}`)).body as { backendProject: unknown }).backendProject;
const projectNames = async () => ((await fromDashboard("/api/projects")).body as { projects: { name: string }[] }).projects.map((project) => project.name);

beforeAll(async () => {
  server = await startProductServer({ timeoutMs: START_TIMEOUT_MS, initialisedDatabase: inject("pgliteTemplate") });
  browser = await launchBrowser();
  dashboard = await browser.newPage();
  dashboard.setDefaultTimeout(STEP_TIMEOUT_MS);
  attacker = await startHttpServer((request, response) => {
    const html = pages.get(request.url ?? "");
    response.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
    response.end(html ?? "not found");
  });
}, START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await browser?.close();
  await attacker?.close();
  await server?.stop();
});

describe("CSRF and sessions in a real browser", { timeout: STEP_TIMEOUT_MS * 2 }, () => {
  it("opening the sign-in link uses nothing up (link previewers); its page's button signs in with a Strict cookie", async () => {
    for (let preview = 0; preview < 2; preview += 1) {
      const previewed = await fetch(server.signInLink);
      expect(previewed.status).toBe(200);
      expect(await previewed.text()).toContain("Sign in</button>");
    }
    await dashboard.goto(server.signInLink);
    expect(new URL(dashboard.url()).pathname).toBe("/signin/link");
    await dashboard.click("main form button[type=submit]");
    await dashboard.waitForFunction(() => location.pathname === "/projects");
    expect(new URL(dashboard.url()).pathname).toBe("/projects");

    const session = (await dashboard.cookies()).find((cookie) => cookie.name === "cbs_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict" });

    const stranger = await (await browser.createBrowserContext()).newPage();
    await stranger.goto(server.signInLink);
    expect(new URL(stranger.url()).pathname).toBe("/signin");
    await stranger.browserContext().close();

    const projects = (await fromDashboard("/api/projects")).body as { projects: { id: string; name: string }[] };
    projectId = projects.projects.find((project) => project.name === "Demo app")!.id;
  });

  it("a page on another port cannot use the dashboard's cookie to change anything; the dashboard itself can", async () => {
    const connected = await fromDashboard("/api/backend/managed/connect", { json: { projectId } });
    expect(connected.status).toBe(200);
    expect(await backendOf()).not.toBeNull();

    // What a hostile sandbox preview on localhost:<port> can send: simple requests that need no
    // CORS preflight, a no-cors fetch with a text/plain JSON body and an auto-submitted form.
    const disconnectBody = JSON.stringify({ projectId, deleteBackendProject: true });
    const html = `<!doctype html><title>preview</title>
      <form id="forge" method="POST" action="${server.baseUrl}/api/projects" enctype="text/plain">
        <input name='{"name":"forged","x":"' value='"}'>
      </form>
      <script>
        fetch(${JSON.stringify(`${server.baseUrl}/api/backend/managed/disconnect`)}, {
          method: "POST", mode: "no-cors", credentials: "include",
          headers: { "content-type": "text/plain" }, body: ${JSON.stringify(disconnectBody)},
        }).finally(() => document.getElementById("forge").submit());
      </script>`;
    const { page, answers } = await visitAttackerPage(attacker.url, html);
    await page.waitForFunction(() => document.body?.innerText.includes("cross_site_request"));
    await saveArtifact(page, "csrf-refused");
    const statuses = answers.map((answer) => [new URL(answer.url()).pathname, answer.request().method(), answer.status()]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        ["/api/backend/managed/disconnect", "POST", 403],
        ["/api/projects", "POST", 403],
      ]),
    );
    await page.close();

    expect(await backendOf()).not.toBeNull();
    expect(await projectNames()).not.toContain("forged");

    // The same requests from the dashboard's own origin.
    expect((await fromDashboard("/api/projects", { json: { name: "made here" }, contentType: "text/plain" })).status).toBe(415);
    expect((await fromDashboard("/api/projects", { json: { name: "made here" } })).status).toBe(201);
    expect(await projectNames()).toContain("made here");
    expect((await fromDashboard("/api/backend/managed/disconnect", { json: { projectId, deleteBackendProject: true } })).status).toBe(200);
    expect(await backendOf()).toBeNull();
  });

  it("the OAuth callback, reached from another site without the Strict cookie, re-enters once and gets it", async () => {
    // localhost is another site than 127.0.0.1, like a backend's consent page.
    const otherSite = attacker.url.replace("127.0.0.1", "localhost");
    const callback = `${server.baseUrl}/backend/callback?state=not-issued&code=x`;
    const { page, answers } = await visitAttackerPage(otherSite, `<!doctype html><a id="back" href="${callback}">back</a>`);
    await page.click("#back");
    await page.waitForFunction(() => document.body?.innerText.includes("invalid_oauth_state"));
    const callbacks = answers.filter((answer) => new URL(answer.url()).pathname === "/backend/callback").map((answer) => answer.status());
    // First without the cookie (our re-entry page), then with it: the state is judged, not the caller.
    expect(callbacks).toEqual([200, 400]);
    await page.close();
  });

  it("edges of the real server answer in the JSON error shape, and an oversize upload throws nothing", async () => {
    for (const path of ["/blob/%ff", "/api/projects/%ff"]) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { code: "invalid_path", message: expect.any(String) } });
    }
    const unknown = await fetch(`${server.baseUrl}/api/projects/${projectId}/nope`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe("route_not_found");
    const wrongMethod = await fetch(`${server.baseUrl}/api/projects`, { method: "PUT" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect((await wrongMethod.json()).error.code).toBe("method_not_allowed");

    const session = (await dashboard.cookies()).find((cookie) => cookie.name === "cbs_session")!;
    for (const extra of [1, 1000]) {
      const form = new FormData();
      form.set("file", new Blob([crypto.randomBytes(MAX_UPLOAD_BYTES + extra)], { type: "image/png" }), "big.png");
      const response = await fetch(`${server.baseUrl}/api/upload-image`, {
        method: "POST",
        headers: { cookie: `cbs_session=${session.value}`, origin: server.baseUrl },
        body: form,
      });
      expect(response.status).toBe(413);
    }
    // A request after them: the server has run whatever the refused uploads left behind.
    expect((await fetch(`${server.baseUrl}/api/health`)).status).toBe(200);
    expect(server.output()).not.toMatch(/uncaughtException|unhandledRejection|ReadableStream is already closed/);
  });
});
