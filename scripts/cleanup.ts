// `npm run cleanup -- --project <id> | --all [--keep 5] [--max-age-days 30] [--dry-run]`. Beside a
// running server on the embedded database it goes through that server's API (CLI_API_TOKEN),
// where `--all` means every project of the token's owner.
import { getBlobStore } from "@/lib/blob";
import { CLEANUP_USAGE, parseCleanupArgs, runCleanupCommand, type CleanupCommand } from "@/lib/bundles/cleanup-cli";
import { loadServerEnv } from "@/lib/cli/env";
import { openCliTarget } from "@/lib/cli/target";
import { closeStore } from "@/lib/store";

loadServerEnv();
let command: CleanupCommand | undefined;
try {
  command = parseCleanupArgs(process.argv.slice(2));
  const target = await openCliTarget();
  const deps = target.kind === "api" ? { api: target.api } : { blob: getBlobStore(), db: target.db };
  await runCleanupCommand(command, { ...deps, output: process.stdout });
} catch (error) {
  console.error((error as Error).message);
  if (!command) console.error(CLEANUP_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
