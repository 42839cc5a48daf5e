// `npm run cleanup -- --project <id> | --all [--keep 5] [--max-age-days 30] [--dry-run]`
import { getBlobStore } from "@/lib/blob";
import { CLEANUP_USAGE, parseCleanupArgs, runCleanupCommand } from "@/lib/bundles/cleanup-cli";
import { closeStore, getStore } from "@/lib/store";

try {
  const command = parseCleanupArgs(process.argv.slice(2));
  await runCleanupCommand(command, { blob: getBlobStore(), db: await getStore(), output: process.stdout });
} catch (error) {
  console.error((error as Error).message);
  console.error(CLEANUP_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
