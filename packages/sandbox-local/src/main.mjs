// Entry point of the local sandbox service: `node packages/sandbox-local/src/main.mjs`.
// Settings come from the environment (the product's lib/config documents them in .env.example);
// the first line on stdout is `{"listening":<port>}` once the service answers.
import fs from "node:fs";
import path from "node:path";
import { createSandboxRegistry } from "./sandboxes.mjs";
import { createServiceServer } from "./service.mjs";

const fail = (message) => {
  process.stderr.write(`sandbox-local: ${message}\n`);
  process.exit(2);
};

const apiKey = process.env.SANDBOX_SERVICE_API_KEY;
if (!apiKey) fail("SANDBOX_SERVICE_API_KEY is required");
const dataDir = process.env.SANDBOX_SERVICE_DATA_DIR;
if (!dataDir) fail("SANDBOX_SERVICE_DATA_DIR is required");
const port = Number(process.env.SANDBOX_SERVICE_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail("SANDBOX_SERVICE_PORT must be a port number");
const megabytes = (name, fallback) => Number(process.env[name] ?? fallback) * 1024 * 1024;

// Sandboxes do not outlive the service (their processes ended with it): homes left by an earlier
// run are garbage.
fs.rmSync(path.join(path.resolve(dataDir), "sandboxes"), { recursive: true, force: true });
// Sockets need a short path (at most 107 bytes), wherever the data directory is.
const runtimeRoot = fs.mkdtempSync("/tmp/sandbox-local-");
const registry = createSandboxRegistry({
  dataDir: path.resolve(dataDir),
  runtimeRoot,
  // `base` is E2B's default template: an empty home.
  templates: { base: null },
  limits: { memoryBytes: megabytes("SANDBOX_MEMORY_MB", 2048), maxProcesses: Number(process.env.SANDBOX_MAX_PROCESSES ?? 512) },
});

// Domain of `getHost`: `<port>-<id>.localhost:<servicePort>` reaches this service from a browser
// (Chromium resolves *.localhost to loopback); server-side clients connect to the service's
// address with that Host header.
let domain = process.env.SANDBOX_SERVICE_DOMAIN;
const server = createServiceServer({ apiKey, get domain() { return domain; }, registry });

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  domain ??= `localhost:${address.port}`;
  process.stdout.write(`${JSON.stringify({ listening: address.port })}\n`);
});

const shutdown = async () => {
  server.close();
  await registry.closeAll();
  fs.rmSync(runtimeRoot, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
