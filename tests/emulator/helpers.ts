import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createEmulator, type Emulator, type EmulatorOptions } from "@/lib/emulator";
import { contractRecorder } from "../contract/openapi";

export const ORIGIN = "http://127.0.0.1:4010";
export const BASE = `${ORIGIN}/emulator`;

/** A project created with a dev deployment, and a deploy key of that deployment. */
export interface ProvisionedForTest {
  created: { id: number; slug: string; deploymentName: string; deploymentUrl: string };
  deployKey: string;
}

/**
 * Calls an emulator's management handler directly (no HTTP), the way the app route does; its
 * deployments listen on loopback. Every exchange is checked against the OpenAPI documents, and
 * `close()` (call it in afterAll) closes the listeners and fails when one broke the contract.
 */
export function emulatorClient(options: EmulatorOptions = {}) {
  const contract = contractRecorder();
  const emulator: Emulator = createEmulator({ ...options, onExchange: contract.onExchange });
  const { identity } = emulator;
  const call = (path: string, init: RequestInit = {}) => emulator.handle(new Request(BASE + path, init));
  const json = (body: unknown, authorization?: string): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization && { authorization }) },
    body: JSON.stringify(body),
  });
  const form = (fields: Record<string, string>): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  const teamBearer = `Bearer ${identity.teamToken}`;

  /** The built-in team's id, from token_details as a client reads it. */
  async function teamId(bearer = teamBearer): Promise<number> {
    return (await (await call("/v1/token_details", { headers: { authorization: bearer } })).json()).teamId;
  }

  /** create_project (dev) + create_deploy_key on the built-in team. */
  async function provision(projectName: string): Promise<ProvisionedForTest> {
    const created = await (await call(`/v1/teams/${await teamId()}/create_project`, json({ projectName, deploymentType: "dev" }, teamBearer))).json();
    const { deployKey } = await (await call(`/v1/deployments/${created.deploymentName}/create_deploy_key`, json({ name: "test" }, teamBearer))).json();
    return { created, deployKey };
  }

  async function close(): Promise<void> {
    await emulator.close();
    contract.verify();
  }

  return { emulator, identity, call, json, form, teamBearer, teamId, provision, close, contract };
}

/** A fetch that opens a new connection for each request (no keep-alive pool). */
export async function fetchOnNewConnection(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const body = typeof init?.body === "string" ? init.body : undefined;
  return new Promise((resolve, reject) => {
    const request = http.request(String(input), { method: init?.method ?? "GET", headers: Object.fromEntries(new Headers(init?.headers)), agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve(new Response(Buffer.concat(chunks), { status: response.statusCode, headers: response.headers as Record<string, string> })));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** A folder for the `convex` CLI: a package.json depending on convex, the repository's node_modules, these files under `convex/`. */
export function convexAppDir(files: Record<string, string>): string {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "convex-app-"));
  fs.writeFileSync(path.join(cwd, "package.json"), JSON.stringify({ name: "convex-app", private: true, dependencies: { convex: "1.48.0" } }));
  // The CLI bundles with the project's own convex package and esbuild.
  fs.symlinkSync(path.resolve("node_modules"), path.join(cwd, "node_modules"), "dir");
  fs.mkdirSync(path.join(cwd, "convex"));
  for (const [name, source] of Object.entries(files)) fs.writeFileSync(path.join(cwd, "convex", name), source);
  return cwd;
}

/**
 * Runs the real `convex` CLI in `cwd` against a deployment named in its environment (never on its
 * command line, where `ps` shows it); exit code and both streams. Generous time for a loaded machine.
 */
export async function runConvexCli(cwd: string, args: string[], deployment: { url: string; adminKey: string }, env: Record<string, string> = {}): Promise<{ code: number; output: string; stdout: string }> {
  return promisify(execFile)(path.resolve("node_modules/.bin/convex"), args, {
    cwd,
    env: { ...process.env, CONVEX_SELF_HOSTED_URL: deployment.url, CONVEX_SELF_HOSTED_ADMIN_KEY: deployment.adminKey, CI: "1", NO_COLOR: "1", ...env },
    // One CLI start took 85 s on a machine loaded by several suites.
    timeout: 300_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr, stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr, stdout: error.stdout }),
  );
}
