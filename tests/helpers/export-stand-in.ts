/**
 * Stands in for `expo export` where a file tests what the service does with a bundle, not the
 * export (tests/bundles prove the real one): Expo's export layout with the app's commit id as the
 * bundle, so every commit gets its own update. Set as BUNDLE_EXPORT_COMMAND.
 */
export const STAND_IN_EXPORT_COMMAND = [
  "mkdir -p dist/_expo/static/js/ios",
  "git rev-parse HEAD > dist/_expo/static/js/ios/entry.hbc",
  `echo '{"fileMetadata":{"ios":{"bundle":"_expo/static/js/ios/entry.hbc","assets":[]}}}' > dist/metadata.json`,
].join(" && ");
