import { z } from "zod";
import type { Platform } from "@/lib/updates/streams";
import { APP_DIR, FileNotFoundError, isSandboxError, type Sandbox } from "@/lib/sandbox";
import { BundleBuildError } from "./errors";

/** `runtimeVersion` as an app config may state it: a string or a policy (Expo docs, "runtimeVersion"). */
const runtimeVersionField = z.union([
  z.string().min(1),
  z.object({ policy: z.enum(["appVersion", "nativeVersion", "sdkVersion", "fingerprint"]) }),
]);

const expoConfigSchema = z.looseObject({
  version: z.string().optional(),
  sdkVersion: z.string().optional(),
  runtimeVersion: runtimeVersionField.optional(),
  ios: z.looseObject({ runtimeVersion: runtimeVersionField.optional(), buildNumber: z.string().optional() }).optional(),
  android: z.looseObject({ runtimeVersion: runtimeVersionField.optional(), versionCode: z.number().int().optional() }).optional(),
});

export type ExpoConfig = z.output<typeof expoConfigSchema>;

export interface AppConfig {
  /** The `expo` object of app.json (public: it ships inside every app binary). */
  expo: ExpoConfig;
  /** The `expo` dependency range of package.json, for the `sdkVersion` policy. */
  expoDependency?: string;
}

/** `54.0.0` from a dependency range such as `~54.0.0` or `^54.0.3`: SDK versions are `<major>.0.0`. */
function sdkVersionFromRange(range: string | undefined): string | undefined {
  const major = range?.match(/(\d+)\.\d+/)?.[1];
  return major ? `${major}.0.0` : undefined;
}

/**
 * The runtime version a platform's build of this config runs: `ios.runtimeVersion` (or
 * `android.runtimeVersion`) over the top-level one; policies resolved as Expo resolves them (the
 * native version: iOS `buildNumber`, Android `versionCode`); no runtimeVersion at all means the
 * `sdkVersion` policy. The `fingerprint` policy needs Expo's fingerprint tool, so it is refused.
 */
export function resolveRuntimeVersion(expo: ExpoConfig, expoDependency?: string, platform: Platform = "ios"): string {
  const declared = expo[platform]?.runtimeVersion ?? expo.runtimeVersion ?? { policy: "sdkVersion" as const };
  if (typeof declared === "string") return declared;
  const missing = (what: string) =>
    new BundleBuildError("config", `runtimeVersion policy "${declared.policy}" needs ${what} in app.json; or set runtimeVersion to a string.`);
  switch (declared.policy) {
    case "appVersion":
      if (!expo.version) throw missing('"version"');
      return expo.version;
    case "nativeVersion":
      if (!expo.version) throw missing('"version"');
      return `${expo.version}(${platform === "ios" ? (expo.ios?.buildNumber ?? "1") : String(expo.android?.versionCode ?? 1)})`;
    case "sdkVersion": {
      const sdk = expo.sdkVersion ?? sdkVersionFromRange(expoDependency);
      if (!sdk) throw missing('"sdkVersion" (or an "expo" dependency in package.json)');
      return `exposdk:${sdk}`;
    }
    case "fingerprint":
      throw new BundleBuildError("config", 'runtimeVersion policy "fingerprint" is not supported for static bundles; set runtimeVersion to a string in app.json.');
  }
}

async function readJson(sandbox: Sandbox, appDir: string, file: string): Promise<unknown> {
  try {
    return JSON.parse(await sandbox.files.read(`${appDir}/${file}`));
  } catch (error) {
    if (isSandboxError(error, FileNotFoundError)) return undefined;
    if (error instanceof SyntaxError) throw new BundleBuildError("config", `${file} is not valid JSON: ${error.message}`);
    throw error;
  }
}

/** Reads app.json (and the Expo dependency from package.json) of the app checked out at `appDir`. */
export async function readAppConfig(sandbox: Sandbox, appDir: string = APP_DIR): Promise<AppConfig> {
  const appJson = await readJson(sandbox, appDir, "app.json");
  if (appJson === undefined) {
    throw new BundleBuildError("config", "The app has no app.json; static bundles read runtimeVersion from it.");
  }
  // app.json holds either `{ "expo": { ... } }` or the expo object itself.
  const raw = z.looseObject({ expo: z.unknown().optional() }).safeParse(appJson);
  const parsed = expoConfigSchema.safeParse(raw.success && raw.data.expo !== undefined ? raw.data.expo : appJson);
  if (!parsed.success) {
    throw new BundleBuildError("config", `app.json is not a valid Expo config: ${parsed.error.issues[0].message}`);
  }
  const packageJson = z
    .looseObject({ dependencies: z.record(z.string(), z.string()).optional() })
    .safeParse(await readJson(sandbox, appDir, "package.json"));
  const expoDependency = packageJson.success ? packageJson.data.dependencies?.expo : undefined;
  // A config whose runtime version cannot be resolved fails here, before any export.
  resolveRuntimeVersion(parsed.data, expoDependency);
  return { expo: parsed.data, expoDependency };
}
