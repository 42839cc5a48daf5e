// Worker thread that loads the modules of one push of an emulated deployment (files written by
// lib/emulator/modules.ts) and reports what they define, the way the backend analyses a push:
// functions (kind, visibility, validators), HTTP routes, crons, the schema and the auth providers.
// A fresh worker per push keeps pushed code away from the server: its own heap limit, its own
// module cache, and terminate() stops a module that never returns.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const { dir, modulePaths, schemaPath, authPath } = workerData;

const load = (modulePath) => import(pathToFileURL(path.join(dir, modulePath)).href);

/** The backend's wording for an exception thrown while a module loads. */
function uncaught(error) {
  if (error instanceof Error) {
    const stack = (error.stack ?? "").split("\n").slice(1).join("\n");
    return `Uncaught ${error.name}: ${error.message}${stack ? `\n${stack}` : ""}`;
  }
  return `Uncaught ${String(error)}`;
}

function udfType(value) {
  if (value.isQuery) return "Query";
  if (value.isMutation) return "Mutation";
  if (value.isAction) return "Action";
  return null;
}

function visibility(value) {
  if (value.isPublic) return { kind: "public" };
  if (value.isInternal) return { kind: "internal" };
  return null;
}

function analyseExports(exports) {
  const functions = [];
  let httpRoutes = null;
  let cronSpecs = null;
  for (const [name, value] of Object.entries(exports)) {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) continue;
    const type = udfType(value);
    if (type) {
      functions.push({
        name,
        pos: null,
        udfType: type,
        visibility: visibility(value),
        args: typeof value.exportArgs === "function" ? value.exportArgs() : null,
        returns: typeof value.exportReturns === "function" ? value.exportReturns() : null,
      });
    } else if (value.isRouter && typeof value.getRoutes === "function") {
      httpRoutes = value.getRoutes().map(([routePath, method]) => ({ path: routePath, method }));
    } else if (value.isCrons && value.crons) {
      cronSpecs = Object.entries(value.crons).map(([identifier, spec]) => ({ identifier, ...spec }));
    }
  }
  return { functions, httpRoutes, cronSpecs, sourceMapped: null };
}

/** `{ok, value}` or `{ok: false, path, message}` for the first module that failed to load. */
async function analyse() {
  const modules = {};
  for (const modulePath of modulePaths) {
    try {
      modules[modulePath] = analyseExports(await load(modulePath));
    } catch (error) {
      return { ok: false, kind: "module", path: modulePath, message: uncaught(error) };
    }
  }
  let schema = null;
  if (schemaPath) {
    try {
      const definition = (await load(schemaPath)).default;
      if (!definition || typeof definition.export !== "function") throw new Error("schema.ts must export a schema from defineSchema() as its default export.");
      schema = JSON.parse(definition.export());
    } catch (error) {
      return { ok: false, kind: "schema", path: schemaPath, message: uncaught(error) };
    }
  }
  let auth = [];
  if (authPath) {
    try {
      auth = (await load(authPath)).default?.providers ?? [];
    } catch (error) {
      return { ok: false, kind: "auth", path: authPath, message: uncaught(error) };
    }
  }
  return { ok: true, value: { modules, schema, auth } };
}

parentPort.postMessage(await analyse());
