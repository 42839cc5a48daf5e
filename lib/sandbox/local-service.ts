import { randomBytes } from "node:crypto";
import dns from "node:dns";
import fs from "node:fs";
import type { LookupFunction } from "node:net";
import path from "node:path";
import { Agent, fetch as undiciFetch } from "undici";
import type { Config } from "@/lib/config";
import { createKeyFileOnce } from "@/lib/secrets";
import { SandboxError } from "./errors";

/**
 * The local sandbox service (packages/sandbox-local) as the server sees it under
 * `SANDBOX_DRIVER=local`: its address, its API key (a file in DATA_DIR that scripts/sandbox-service.ts
 * writes once), and how the server reaches its preview hosts.
 */

/** The service's API key, in DATA_DIR: mode 0600, read by the service and the server only. */
export const sandboxServiceKeyFile = (dataDir: string): string => path.join(dataDir, "sandbox-service.key");

/** The service's own data (sandbox homes), in DATA_DIR but never visible to a sandbox. */
export const sandboxServiceDataDir = (dataDir: string): string => path.join(dataDir, "sandbox-service");

/** Where the server's e2b driver calls the service (lifecycle API and envd on one address). */
export const sandboxServiceUrl = (config: Pick<Config, "E2B_API_URL" | "SANDBOX_SERVICE_PORT">): string =>
  config.E2B_API_URL ?? `http://127.0.0.1:${config.SANDBOX_SERVICE_PORT}`;

/** An API key of E2B's shape (`e2b_` and 40 hex digits), as the SDK checks it. */
const newApiKey = () => `e2b_${randomBytes(20).toString("hex")}`;

/** Creates the key file unless it exists (two starts at once keep the first one's key); answers its path. */
export function ensureSandboxServiceKey(dataDir: string): string {
  const file = sandboxServiceKeyFile(dataDir);
  if (!fs.existsSync(file)) createKeyFileOnce(file, newApiKey());
  return file;
}

/** The key the service accepts; 503 `sandbox_unavailable` while no service ever started here. */
export function readSandboxServiceKey(dataDir: string): string {
  try {
    return fs.readFileSync(sandboxServiceKeyFile(dataDir), "utf8").trim();
  } catch {
    throw new SandboxError("The local sandbox service has not been started: run it with `npm start`, or `npm run sandbox-service` beside `next dev`.", {
      status: 503,
      code: "sandbox_unavailable",
    });
  }
}

/**
 * Resolves `*.localhost` (a local sandbox's preview hosts, `<port>-<id>.localhost`) to loopback as
 * browsers do (RFC 6761); Node's resolver does not. Everything else is the system's answer.
 */
const loopbackLookup: LookupFunction = (hostname, options, callback) => {
  if (!/(^|\.)localhost\.?$/i.test(hostname)) return dns.lookup(hostname, options, callback);
  if (options.all) (callback as unknown as (error: null, addresses: dns.LookupAddress[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

let previewAgent: Agent | undefined;

/** `fetch` for preview URLs: reaches `*.localhost` hosts (the local service's previews) too. */
export function fetchPreview(url: string, init: Parameters<typeof undiciFetch>[1] = {}): ReturnType<typeof undiciFetch> {
  previewAgent ??= new Agent({ connect: { lookup: loopbackLookup } });
  return undiciFetch(url, { ...init, dispatcher: previewAgent });
}
