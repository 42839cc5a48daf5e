import path from "node:path";
import { parseConfig } from "@/lib/config";
import { AppToolchain } from "@/lib/toolchain";

/**
 * Prepares the app toolchain once per run (the first run on a machine installs it from npm, with
 * progress lines); every test file's sandboxes then hard-link it.
 */
export default async function prepareAppToolchain(): Promise<void> {
  const { APP_TOOLCHAIN_DIR } = parseConfig(process.env);
  const toolchain = new AppToolchain({ dir: APP_TOOLCHAIN_DIR, onProgress: (line) => console.log(line) });
  await toolchain.prepare(path.resolve("templates", "app"));
}
