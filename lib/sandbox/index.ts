import path from "node:path";
import { getConfig } from "@/lib/config";
import { processSingleton } from "@/lib/singletons";
import { getAppToolchain, sandboxCacheHome, sandboxNpmEnv } from "@/lib/toolchain";
import { createE2BSandboxProvider } from "./drivers/e2b";
import { createLocalSandboxProvider } from "./drivers/local";
import { readSandboxServiceKey, sandboxServiceUrl } from "./local-service";
import type { SandboxProvider } from "./port";

export * from "./port";
export * from "./errors";
export { seedAppFromTemplate } from "./app-repository";
export { findProcessesByRole, PROCESS_ROLE_VARIABLE, roleEnvs, stopProcessesByRole } from "./process-roles";
export { createLineSplitter, type LineSplitter } from "./lines";
export { getCommandHost } from "./drivers/local-command-host";
export { ensureSandboxServiceKey, fetchPreview, sandboxServiceDataDir } from "./local-service";

/** The template new projects start from (`templates/app`). */
export const APP_TEMPLATE = "app";

function createSandboxProvider(): SandboxProvider {
  const config = getConfig();
  switch (config.SANDBOX_DRIVER) {
    case "e2b":
      return createE2BSandboxProvider({
        apiKey: config.E2B_API_KEY,
        e2bTemplate: config.E2B_TEMPLATE,
        apiUrl: config.E2B_API_URL,
        sandboxUrl: config.E2B_SANDBOX_URL,
      });
    case "local": {
      const url = sandboxServiceUrl(config);
      return createE2BSandboxProvider({
        driver: "local",
        apiKey: config.E2B_API_KEY ?? readSandboxServiceKey(config.DATA_DIR),
        apiUrl: url,
        sandboxUrl: config.E2B_SANDBOX_URL ?? url,
        toolchain: getAppToolchain(),
      });
    }
    case "local-unwalled":
      return createLocalSandboxProvider({
        root: path.join(config.DATA_DIR, "sandboxes"),
        dependencies: getAppToolchain(),
        commandEnv: { ...sandboxNpmEnv({ dir: config.APP_TOOLCHAIN_DIR }), XDG_CACHE_HOME: sandboxCacheHome({ dir: config.APP_TOOLCHAIN_DIR }) },
        portRange: config.LOCAL_PORT_RANGE,
        previewHost: config.LOCAL_PREVIEW_HOST,
      });
  }
}

/**
 * The configured sandbox driver (`SANDBOX_DRIVER`: `local` by default, `local-unwalled` or
 * `e2b`), one per process: the unwalled driver tracks running commands in memory, so two
 * instances would not see each other's processes.
 */
export function getSandboxProvider(): SandboxProvider {
  return processSingleton("sandboxProvider", createSandboxProvider);
}
