// Entry point of the local sandbox service: `node --import tsx packages/sandbox-local/src/main.mjs`
// (`npm start` and `npm run sandbox-service` start it through scripts/sandbox-service.ts).
// Settings come from the environment (documented in the repository's .env.example); the first
// line on stdout is `{"listening":<port>}` once the service answers.
import fs from "node:fs";
import path from "node:path";
import { createSandboxRegistry } from "./sandboxes.mjs";
import { createServiceServer } from "./service.mjs";
import { createTemplates } from "./templates.mjs";

const fail = (message) => {
  process.stderr.write(`sandbox-local: ${message}\n`);
  process.exit(2);
};

// The key is read from a file (mode 0600): never on a command line, nor in the environment that
// `ps e` or /proc/<pid>/environ would show.
const keyFile = process.env.SANDBOX_SERVICE_API_KEY_FILE;
if (!keyFile) fail("SANDBOX_SERVICE_API_KEY_FILE is required");
let apiKey = "";
try {
  apiKey = fs.readFileSync(keyFile, "utf8").trim();
} catch (error) {
  fail(`cannot read SANDBOX_SERVICE_API_KEY_FILE: ${error.message}`);
}
if (!apiKey) fail("SANDBOX_SERVICE_API_KEY_FILE is empty");
const dataDir = process.env.SANDBOX_SERVICE_DATA_DIR;
if (!dataDir) fail("SANDBOX_SERVICE_DATA_DIR is required");
const port = Number(process.env.SANDBOX_SERVICE_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail("SANDBOX_SERVICE_PORT must be a port number");
const megabytes = (name, fallback) => Number(process.env[name] ?? fallback) * 1024 * 1024;
let loopbackRange;
if (process.env.SANDBOX_LOOPBACK_PORTS) {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(process.env.SANDBOX_LOOPBACK_PORTS);
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (!match || first < 1024 || first > last || last > 65535) fail("SANDBOX_LOOPBACK_PORTS must be first-last, unprivileged ports");
  loopbackRange = { first, last };
}

// Sockets need a short path (at most 107 bytes), wherever the data directory is.
const runtimeRoot = fs.mkdtempSync("/tmp/sandbox-local-");
const registry = createSandboxRegistry({
  dataDir: path.resolve(dataDir),
  runtimeRoot,
  templates: createTemplates({ toolchainDir: process.env.SANDBOX_SERVICE_TOOLCHAIN_DIR || undefined }),
  limits: { memoryBytes: megabytes("SANDBOX_MEMORY_MB", 2048), maxProcesses: Number(process.env.SANDBOX_MAX_PROCESSES ?? 512) },
  loopbackRange,
});

// Domain of `getHost`: `<port>-<id>.localhost:<servicePort>` reaches this service from a browser
// (Chromium resolves *.localhost to loopback); server-side clients connect to the service's
// address with that Host header.
let domain = process.env.SANDBOX_SERVICE_DOMAIN;
const server = createServiceServer({ apiKey, get domain() { return domain; }, registry });

// The sandboxes of the last run come back before the service answers (a reboot: files kept,
// processes gone), so a client never finds a sandbox missing that is only starting.
await registry.restore();
server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  domain ??= `localhost:${address.port}`;
  process.stdout.write(`${JSON.stringify({ listening: address.port })}\n`);
});

const shutdown = async () => {
  server.close();
  await registry.stopAll();
  fs.rmSync(runtimeRoot, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
