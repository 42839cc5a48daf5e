// CommonJS without static export names: Node's ESM loader sees only its default export.
import nextEnv from "@next/env";

/**
 * Loads the `.env*` files `next start` reads (production set, process env wins), so a CLI uses
 * the server's DATA_DIR and PUBLIC_BASE_URL. Silent: the CLIs print JSON on stdout.
 */
export function loadServerEnv(dir = process.cwd()): void {
  nextEnv.loadEnvConfig(dir, false, { info: () => undefined, error: console.error });
}
