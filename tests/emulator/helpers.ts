import http from "node:http";
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
