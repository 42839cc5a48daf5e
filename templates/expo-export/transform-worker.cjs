// Metro transform worker for exports (see metro.config.cjs): runs the app's own worker and marks
// the result of a module whose source names an EXPO_PUBLIC_ variable, which Babel inlines, so the
// shared cache does not keep it.
const path = require("node:path");

const ENV_DEPENDENT = "cloudBackendEnvDependent";
const INNER_PATH_KEY = "cloudBackendInnerTransformerPath";

let inner;
function innerWorker(config, projectRoot) {
  inner ??= require(path.resolve(projectRoot, config[INNER_PATH_KEY]));
  return inner;
}

module.exports = {
  ENV_DEPENDENT,
  async transform(config, projectRoot, filename, data, options) {
    const result = await innerWorker(config, projectRoot).transform(config, projectRoot, filename, data, options);
    return data.includes("EXPO_PUBLIC_") ? { ...result, [ENV_DEPENDENT]: true } : result;
  },
  getCacheKey(config) {
    const worker = require(path.resolve(process.cwd(), config[INNER_PATH_KEY]));
    return worker.getCacheKey ? worker.getCacheKey(config) : "";
  },
};
