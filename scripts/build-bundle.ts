// `npm run bundle -- --project <id> [--commit <sha>] [--message <text>]`: exports the project's
// app in its sandbox and uploads the static iOS bundle; prints the result as JSON.
import { BUILD_USAGE, parseBuildArgs, runBuildCommand } from "@/lib/bundles/build-cli";
import { closeStore, getStore } from "@/lib/store";

try {
  const command = parseBuildArgs(process.argv.slice(2));
  const result = await runBuildCommand(command, { db: await getStore(), output: process.stdout });
  if (!result.success) process.exitCode = 1;
} catch (error) {
  console.error((error as Error).message);
  console.error(BUILD_USAGE);
  process.exitCode = 1;
} finally {
  await closeStore();
}
