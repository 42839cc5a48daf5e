import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BACKEND_URL_VARIABLE } from "@/lib/app-names";
import { getConfig } from "@/lib/config";
import { injectBackendWrapper } from "@/lib/injection";
import { APP_TEMPLATE_ROOT, AppToolchain } from "@/lib/toolchain";

// Expo's own Babel preset and env loader, from the app toolchain every sandbox gets.
type Babel = { transformAsync(code: string, options: Record<string, unknown>): Promise<{ code: string } | null> };
let babel: Babel;
let presetPath: string;
let loadEnv: (projectRoot: string, options?: { force?: boolean; silent?: boolean }) => unknown;
let appDir: string;
let injectedLayout: string;
const deploymentUrl = "https://happy-otter-123.convex.cloud";

beforeAll(async () => {
  const { root } = await new AppToolchain({ dir: getConfig().APP_TOOLCHAIN_DIR }).prepare(APP_TEMPLATE_ROOT);
  const fromApp = createRequire(path.join(root, "package.json"));
  const fromExpo = createRequire(fromApp.resolve("expo/package.json"));
  babel = fromApp("@babel/core") as Babel;
  presetPath = fromExpo.resolve("babel-preset-expo");
  loadEnv = (fromApp("@expo/env") as { load: typeof loadEnv }).load;

  appDir = await fs.mkdtemp(path.join(os.tmpdir(), "babel-inline-"));
  await fs.writeFile(path.join(appDir, ".env.local"), `${BACKEND_URL_VARIABLE}=${deploymentUrl}\n`);
  const template = await fs.readFile(path.join(APP_TEMPLATE_ROOT, "app", "_layout.tsx"), "utf8");
  injectedLayout = injectBackendWrapper(template, "app/_layout.tsx").code;
});

afterAll(async () => {
  delete process.env[BACKEND_URL_VARIABLE];
  await fs.rm(appDir, { recursive: true, force: true });
});

/** Transforms the layout as Metro asks babel-preset-expo to, for iOS. */
async function transform(isDev: boolean): Promise<string> {
  const result = await babel.transformAsync(injectedLayout, {
    filename: path.join(appDir, "app", "_layout.tsx"),
    babelrc: false,
    configFile: false,
    presets: [presetPath],
    caller: { name: "metro", bundler: "metro", platform: "ios", isDev, isServer: false, isNodeModule: false, engine: "hermes", projectRoot: appDir },
  });
  return result!.code;
}

describe("the injected layout under babel-preset-expo", () => {
  it("reads the URL in the one form Expo inlines", () => {
    expect(injectedLayout).toContain(`process.env.${BACKEND_URL_VARIABLE}`);
  });

  it("leaves no process.env lookup of the URL: a production bundle holds the URL from .env.local itself", async () => {
    // `expo export` runs with NODE_ENV=production; in "test" mode Expo (like dotenv-flow) skips .env.local.
    vi.stubEnv("NODE_ENV", "production");
    try {
      loadEnv(appDir, { force: true, silent: true });
    } finally {
      vi.unstubAllEnvs();
    }
    expect(process.env[BACKEND_URL_VARIABLE]).toBe(deploymentUrl);
    const code = await transform(false);
    expect(code).not.toMatch(new RegExp(`process\\.env\\.${BACKEND_URL_VARIABLE}|process\\.env\\[`));
    expect(code).toContain(JSON.stringify(deploymentUrl));
  });

  it("references Expo's virtual env module in development (so edits to .env.local reach the app)", async () => {
    const code = await transform(true);
    expect(code).not.toContain(`process.env.${BACKEND_URL_VARIABLE}`);
    expect(code).toContain("expo/virtual/env");
    expect(code).toContain(BACKEND_URL_VARIABLE);
  });
});
