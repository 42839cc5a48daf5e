import { getConfig, type Config } from "@/lib/config";
import { seedDemoIfEmpty } from "@/lib/auth/seed";
import { closeDefaultEmulator, EMULATOR_MOUNT_PATH, getDefaultEmulator } from "@/lib/emulator";
import { announceSignInLink } from "@/lib/session/announce";
import { log } from "@/lib/log";
import { closeStore, getStore } from "@/lib/store";

/**
 * Local mode: reopens the emulated deployments' listeners and prints the built-in team's
 * credentials, so users can point their own tools (`@convex-dev/platform`, the `convex` CLI) at it.
 */
async function startEmulator(config: Config): Promise<void> {
  const emulator = getDefaultEmulator();
  const { team, deployments } = await emulator.start();
  // Printed deliberately, like the demo token: this is the local emulator's own credential.
  console.log(
    [
      "",
      `  Local backend emulator (${deployments} deployment${deployments === 1 ? "" : "s"} listening).`,
      `    CONVEX_PROVISION_HOST=${config.PUBLIC_BASE_URL}${EMULATOR_MOUNT_PATH}`,
      `    Team token: ${emulator.identity.teamToken}`,
      `    Team id: ${team.id}  (slug ${team.slug})`,
      "",
    ].join("\n"),
  );
}

/** Server start: open and migrate the store, seed the demo on first start, start the local emulator, close on shutdown. */
export async function startServer(): Promise<void> {
  const config = getConfig();
  const db = await getStore();
  log.info("store ready", { store: db.kind });
  if (config.SEED_DEMO) {
    const seed = await seedDemoIfEmpty(db);
    if (seed) {
      // Printed once, deliberately unredacted: the token is stored hashed and cannot be shown again.
      console.log(
        [
          "",
          "  Demo user created. API token (shown only now, keep it):",
          `    ${seed.token}`,
          `  Demo project: ${seed.project.id}`,
          `  Try: curl -H "Authorization: Bearer ${seed.token}" ${config.PUBLIC_BASE_URL}/api/projects`,
          "",
        ].join("\n"),
      );
    }
    await announceSignInLink(db, config);
  }
  if (config.BACKEND_PROVIDER === "local") await startEmulator(config);
  const shutdown = () => {
    void closeDefaultEmulator()
      .then(closeStore)
      .finally(() => process.exit(0));
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}
