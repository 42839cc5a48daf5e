import { getConfig } from "@/lib/config";
import { APP_DIR, FileNotFoundError, isSandboxError, type Sandbox } from "@/lib/sandbox";

/** The URL an app's `updates.url` points at: the project's Expo Updates endpoint. */
export const updateUrlOf = (projectId: string, baseUrl: string = getConfig().PUBLIC_BASE_URL) =>
  `${baseUrl}/api/projects/${encodeURIComponent(projectId)}/updates`;

/**
 * Writes the project's update URL into the app repository's app.json (`expo.updates.url`) and
 * commits it. The repository is where a native build (prebuild, `expo run:ios`, EAS Build)
 * reads the URL it embeds for expo-updates; an export only copies the config into the manifest.
 * Nothing happens when app.json already has this URL or the app has no app.json.
 */
export async function pointAppAtUpdates(sandbox: Sandbox, projectId: string): Promise<boolean> {
  const file = `${APP_DIR}/app.json`;
  let text: string;
  try {
    text = await sandbox.files.read(file);
  } catch (error) {
    if (isSandboxError(error, FileNotFoundError)) return false;
    throw error;
  }
  const appJson = JSON.parse(text) as { expo?: Record<string, unknown> } & Record<string, unknown>;
  // app.json holds either `{ "expo": { ... } }` or the expo object itself.
  const expo = appJson.expo ?? appJson;
  const url = updateUrlOf(projectId);
  const updates = (expo.updates ?? {}) as Record<string, unknown>;
  if (updates.url === url) return false;
  expo.updates = { ...updates, url };
  await sandbox.files.write(file, `${JSON.stringify(appJson, null, 2)}\n`);
  await sandbox.commands.run("git add app.json && git commit -q -m \"Point expo-updates at this project's update URL\"", { cwd: APP_DIR, timeoutMs: 30_000 });
  return true;
}
