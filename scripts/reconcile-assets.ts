// `npm run assets:reconcile -- --project <id> | --all [--dry-run]`. Beside a running server on the
// embedded database it goes through that server's API (CLI_API_TOKEN), where `--all` means every
// project of the token's owner.
import { getAssetManifestLock } from "@/lib/assets";
import { parseReconcileArgs, RECONCILE_USAGE, runReconcileCommand, type ReconcileCommand } from "@/lib/assets/reconcile";
import { getBlobStore } from "@/lib/blob";
import { loadServerEnv } from "@/lib/cli/env";
import { openCliTarget } from "@/lib/cli/target";
import { getSandboxProvider } from "@/lib/sandbox";
import { closeStore } from "@/lib/store";

loadServerEnv();
let command: ReconcileCommand | undefined;
try {
  command = parseReconcileArgs(process.argv.slice(2));
  const target = await openCliTarget();
  const deps =
    target.kind === "api"
      ? { api: target.api }
      : { db: target.db, blobs: getBlobStore(), manifestLock: getAssetManifestLock(), sandboxes: getSandboxProvider() };
  await runReconcileCommand(command, { ...deps, output: process.stdout });
} catch (error) {
  console.error((error as Error).message);
  if (!command) console.error(RECONCILE_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
