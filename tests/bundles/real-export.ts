import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { getConfig } from "@/lib/config";
import { exportCommandFor } from "@/lib/bundles/export";
import { APP_TEMPLATE_ROOT, AppToolchain } from "@/lib/toolchain";
import { FIXTURE_FILES } from "./build-fixture";

/** Every file under `dir`, by path relative to it. */
export async function filesUnder(dir: string): Promise<Map<string, Uint8Array>> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
  return new Map(await Promise.all(files.map(async (file) => [file, new Uint8Array(await fs.readFile(path.join(dir, file)))] as const)));
}

/**
 * The template app with {@link FIXTURE_FILES}, exported for iOS on this machine by the real Expo
 * CLI (from the app toolchain): what `expo export` writes in any sandbox. Returns the app directory.
 */
export async function exportFixtureApp(): Promise<string> {
  const app = await fs.mkdtemp(path.join(os.tmpdir(), "expo-export-"));
  await fs.cp(APP_TEMPLATE_ROOT, app, { recursive: true });
  for (const [file, data] of Object.entries(FIXTURE_FILES)) {
    await fs.mkdir(path.dirname(path.join(app, file)), { recursive: true });
    await fs.writeFile(path.join(app, file), data);
  }
  await new AppToolchain({ dir: getConfig().APP_TOOLCHAIN_DIR }).linkInto(APP_TEMPLATE_ROOT, app);
  await promisify(execFile)("bash", ["-c", exportCommandFor(["ios"])], { cwd: app, env: { ...process.env, CI: "1", EXPO_NO_TELEMETRY: "1", NODE_ENV: "production" }, maxBuffer: 16 << 20 });
  return app;
}
