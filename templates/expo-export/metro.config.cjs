// The app's own Metro config for `expo export`, with a transform cache that every export on the
// machine shares, whatever the app's EXPO_PUBLIC_* values (loaded through Expo CLI's
// EXPO_OVERRIDE_METRO_CONFIG by lib/bundles/export.ts).
//
// Babel inlines EXPO_PUBLIC_* values into the modules that name them, but Metro's cache key does
// not include the values. So the modules whose source names one are transformed anew by every
// export and never cached (transform-worker.cjs marks them); all others, node_modules included,
// are cached once for every app and deployment URL.
//
// When an Expo CLI ignores the override, the export uses the app's config and Expo's cache under
// $TMPDIR, which the export command keeps per set of env values: correct, only cold.
const fs = require("node:fs");
const path = require("node:path");

const projectRoot = process.cwd();
const sharedCacheDir = process.env.CLOUD_BACKEND_EXPORT_CACHE;
const { ENV_DEPENDENT } = require("./transform-worker.cjs");
// A checkout whose node_modules links to the live app's (lib/bundles/export.ts): Metro resolves
// the link and serves only files under its watch folders, so it watches where the link leads.
const modulesDir = path.join(projectRoot, "node_modules");
const linkedModules = fs.lstatSync(modulesDir, { throwIfNoEntry: false })?.isSymbolicLink() ? [fs.realpathSync(modulesDir)] : [];

/** Requires a package as Expo CLI itself resolves it (from its own install inside `expo`). */
function requireFromExpoCli(id) {
  const expoDir = path.dirname(require.resolve("expo/package.json", { paths: [projectRoot] }));
  const cliDir = path.dirname(require.resolve("@expo/cli/package.json", { paths: [expoDir] }));
  return require(require.resolve(id, { paths: [cliDir] }));
}

async function exportConfig() {
  const { resolveConfig, mergeConfig } = requireFromExpoCli("@expo/metro/metro-config");
  const { getDefaultConfig, unstable_transformerPath } = requireFromExpoCli("@expo/metro-config");
  const { FileStore } = requireFromExpoCli("@expo/metro-config/file-store");

  const own = await resolveConfig(undefined, projectRoot);
  const config = own.isEmpty ? getDefaultConfig(projectRoot) : await mergeConfig(getDefaultConfig(projectRoot), own.config);
  if (!sharedCacheDir) throw new Error("CLOUD_BACKEND_EXPORT_CACHE is not set: it names the export cache every app shares.");

  class SharedExportStore extends FileStore {
    async set(key, value) {
      if (value && value[ENV_DEPENDENT]) return;
      return super.set(key, value);
    }
  }
  const innerTransformerPath = config.transformerPath ?? unstable_transformerPath;
  return {
    ...config,
    watchFolders: [...(config.watchFolders ?? []), ...linkedModules],
    cacheStores: [new SharedExportStore({ root: sharedCacheDir })],
    transformerPath: require.resolve("./transform-worker.cjs"),
    transformer: {
      ...config.transformer,
      // Relative: the value is part of Metro's cache key, and every commit has its own checkout.
      cloudBackendInnerTransformerPath: path.relative(projectRoot, innerTransformerPath),
    },
  };
}

module.exports = exportConfig();
