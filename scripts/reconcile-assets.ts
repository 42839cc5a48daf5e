// `npm run assets:reconcile -- --project <id> | --all [--dry-run]`
import { getAssetManifestLock } from "@/lib/assets";
import { parseReconcileArgs, RECONCILE_USAGE, runReconcileCommand } from "@/lib/assets/reconcile";
import { getBlobStore } from "@/lib/blob";
import { getSandboxProvider } from "@/lib/sandbox";
import { closeStore, getStore } from "@/lib/store";

try {
  const command = parseReconcileArgs(process.argv.slice(2));
  await runReconcileCommand(command, {
    db: await getStore(),
    blobs: getBlobStore(),
    manifestLock: getAssetManifestLock(),
    sandboxes: getSandboxProvider(),
    output: process.stdout,
  });
} catch (error) {
  console.error((error as Error).message);
  console.error(RECONCILE_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
