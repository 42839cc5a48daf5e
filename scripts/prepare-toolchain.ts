// Installs the app toolchain (lib/toolchain) when local sandboxes use it. `npm start` runs this
// beside the production build, so the two minutes of a first start overlap; the server, once up,
// follows this install through its lock instead of starting another.
import { loadServerEnv } from "@/lib/cli/env";
import { getConfig } from "@/lib/config";
import { APP_TEMPLATE_ROOT, getAppToolchain } from "@/lib/toolchain";

loadServerEnv();
if (getConfig().SANDBOX_DRIVER !== "e2b") {
  await getAppToolchain()
    .prepare(APP_TEMPLATE_ROOT)
    .catch((error: unknown) => {
      // The server tries again and shows the reason on the dashboard, with a Retry.
      console.error((error as Error).message);
      process.exitCode = 1;
    });
}
