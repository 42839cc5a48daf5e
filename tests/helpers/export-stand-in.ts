import { PLATFORMS } from "@/lib/updates/streams";

/** What the stand-in writes: Expo's export metadata for one bundle per platform. */
const METADATA = { fileMetadata: Object.fromEntries(PLATFORMS.map((platform) => [platform, { bundle: `_expo/static/js/${platform}/entry.hbc`, assets: [] }])) };

/**
 * Stands in for `expo export` where a file tests what the service does with a bundle, not the
 * export (tests/bundles prove the real one): Expo's export layout for iOS and Android (what a
 * build exports by default) with the app's commit id as each bundle, so every commit gets its own
 * update. Set as BUNDLE_EXPORT_COMMAND.
 */
export const STAND_IN_EXPORT_COMMAND = [
  ...PLATFORMS.map((platform) => `mkdir -p dist/_expo/static/js/${platform} && git rev-parse HEAD > dist/_expo/static/js/${platform}/entry.hbc`),
  `echo '${JSON.stringify(METADATA)}' > dist/metadata.json`,
].join(" && ");
