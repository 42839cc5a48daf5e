// The local sandbox service (packages/sandbox-local) with this checkout's settings: `npm start`
// runs it beside the server, `npm run sandbox-service` beside `next dev` (SANDBOX_DRIVER=local).
// Writes the service's API key once into DATA_DIR (mode 0600; the server reads it there), then
// runs the service in this process with its own settings as its whole environment: nothing of
// the server's configuration (database, secrets) is there for a sandbox to find.
import { loadServerEnv } from "@/lib/cli/env";
import { getConfig } from "@/lib/config";
import { ensureSandboxServiceKey, sandboxServiceDataDir } from "@/lib/sandbox/local-service";

/** The service's own settings that pass through as they are (see .env.example). */
const PASSED = ["PATH", "SANDBOX_SERVICE_DOMAIN", "SANDBOX_MEMORY_MB", "SANDBOX_MAX_PROCESSES"];

loadServerEnv();
const config = getConfig();
const { first, last } = config.EMULATOR_PORT_RANGE;
const settings: Record<string, string> = {
  ...Object.fromEntries(PASSED.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
  SANDBOX_SERVICE_API_KEY_FILE: ensureSandboxServiceKey(config.DATA_DIR),
  SANDBOX_SERVICE_DATA_DIR: sandboxServiceDataDir(config.DATA_DIR),
  SANDBOX_SERVICE_PORT: String(config.SANDBOX_SERVICE_PORT),
  // Prepared app toolchains become templates (lib/toolchain names them).
  SANDBOX_SERVICE_TOOLCHAIN_DIR: config.APP_TOOLCHAIN_DIR,
  // Code in a sandbox reaches the project's emulated deployment at the URL in its .env.local.
  SANDBOX_LOOPBACK_PORTS: `${first}-${last}`,
};
for (const name of Object.keys(process.env)) delete process.env[name];
Object.assign(process.env, settings);
// The service is plain JavaScript of its own package: loaded by address, not type-checked here.
await import(new URL("../packages/sandbox-local/src/main.mjs", import.meta.url).href);
