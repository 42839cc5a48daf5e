// `npm run bundle -- --project <id> [--commit <sha>] [--message <text>] [--platform ios|android]`:
// exports the project's app in its sandbox (iOS and Android unless --platform names one), uploads
// and publishes the static bundles; prints the result as JSON. Beside a running server on the
// embedded database it goes through that server's API (CLI_API_TOKEN).
import { BUILD_USAGE, parseBuildArgs, runBuildCommand, type BuildCommand } from "@/lib/bundles/build-cli";
import { loadServerEnv } from "@/lib/cli/env";
import { openCliTarget } from "@/lib/cli/target";
import { closeStore } from "@/lib/store";
import { openProjectSandbox } from "@/lib/workspace";

loadServerEnv();
let command: BuildCommand | undefined;
try {
  command = parseBuildArgs(process.argv.slice(2));
  const target = await openCliTarget();
  const deps = target.kind === "api" ? { api: target.api } : { db: target.db, openSandbox: openProjectSandbox };
  const result = await runBuildCommand(command, { ...deps, output: process.stdout });
  if (!result.success) process.exitCode = 1;
} catch (error) {
  console.error((error as Error).message);
  if (!command) console.error(BUILD_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
