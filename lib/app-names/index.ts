/**
 * The names real tools read in a user's app. The spec speaks of `backend/`, `backend.json` and
 * `APP_PUBLIC_BACKEND_URL`; the convex CLI reads `convex.json` and `convex/`, and
 * babel-preset-expo inlines only `EXPO_PUBLIC_*` variables. Everything that writes into an app,
 * or tells a person or the assistant about it, takes the names from here.
 */

/** The backend's npm package; the wrapper imports `convex/react` from it. */
export const BACKEND_PACKAGE = "convex";

/**
 * The range enable writes into the app's package.json. The 1.x line keeps its client and CLI
 * compatible; 1.48 is the release the service is tested with.
 */
export const BACKEND_PACKAGE_RANGE = "^1.48.0";

/** The oldest `convex` release the service supports when an app already pins its own. */
export const MIN_BACKEND_PACKAGE_VERSION = "1.17.0";

/** The CLI's project configuration file, at the app root. */
export const BACKEND_CONFIG_FILE = "convex.json";

/** The folder holding the backend functions, relative to the app root (no trailing slash). */
export const FUNCTIONS_DIR = "convex";

/** The client-visible variable holding the deployment URL; Expo inlines it at bundle time. */
export const BACKEND_URL_VARIABLE = "EXPO_PUBLIC_CONVEX_URL";

/** The client-visible variable holding the HTTP-actions URL (the CLI writes it beside the URL). */
export const BACKEND_SITE_URL_VARIABLE = "EXPO_PUBLIC_CONVEX_SITE_URL";

/** Names written by earlier versions of the service; migrated on the next enable or restore. */
export const LEGACY_NAMES = {
  configFile: "backend.json",
  functionsDir: "backend",
  urlVariable: "APP_PUBLIC_BACKEND_URL",
} as const;

/**
 * The HTTP-actions URL of a hosted deployment (`https://<name>.convex.cloud` serves its HTTP
 * actions at `https://<name>.convex.site`); null where it cannot be derived.
 */
export function siteUrlFor(deploymentUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(deploymentUrl);
  } catch {
    return null;
  }
  if (!url.hostname.endsWith(".convex.cloud")) return null;
  url.hostname = url.hostname.replace(/\.convex\.cloud$/, ".convex.site");
  return url.origin;
}

/** Where Expo Router apps keep their root layout, in the order enable looks for it. */
export const ROOT_LAYOUT_CANDIDATES = ["app/_layout.tsx", "app/_layout.jsx", "app/_layout.js"] as const;
