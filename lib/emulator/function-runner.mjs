// The process that loads the modules of one push of an emulated deployment (files written by
// lib/emulator/modules.ts), started behind the wall of lib/emulator/runner-process.ts. Two modes:
// - "analyse" reports what the modules define, the way the backend analyses a push: functions
//   (kind, visibility, validators), HTTP routes, crons, the schema and the auth providers;
// - "serve" runs their functions with Convex's semantics, taken from convex-test (Convex's own JS
//   implementation of the backend), on the deployment's documents; every committed write is
//   sent to the server, which persists it.
// It talks to the server over node's IPC channel; its first message says what to do.
import { AsyncLocalStorage } from "node:async_hooks";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inspect } from "node:util";

const send = (message) => process.send(message);
// The server is gone: nothing is left to answer.
process.on("disconnect", () => process.exit(0));
const init = await new Promise((resolve) => process.once("message", resolve));
const { mode, dir, modulePaths, schemaPath, authPath } = init;

const load = (modulePath) => {
  if (mode === "analyse") send({ type: "loading", path: modulePath });
  return import(pathToFileURL(path.join(dir, modulePath)).href);
};

/**
 * The backend's wording for an uncaught exception: `Uncaught <name>: <message>` and the frames of
 * the app's code, at its sources when the push has source maps (`../convex/messages.ts:12:9`), else
 * in the bundles; the runtime's and libraries' frames say nothing to the app's developer.
 */
function uncaught(error) {
  if (!(error instanceof Error)) return `Uncaught ${String(error)}`;
  // Bundle frames are file URLs, source-mapped frames plain paths; both below the deployment's directory.
  const deploymentDir = path.dirname(dir) + path.sep;
  const appFile = new RegExp(`${deploymentDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[^\\s):]+`);
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => line.trimStart().startsWith("at "))
    .map((line) => line.replace(/file:\/\/[^\s)]+/, (url) => fileURLToPath(url)))
    .filter((line) => appFile.test(line) && !line.includes("/node_modules/") && !line.includes("/_deps/"))
    .map((line) => line.replace(appFile, (file) => path.relative(dir, file)));
  return [`Uncaught ${error.name}: ${error.message}`, ...frames].join("\n");
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
  let documentsProblem = null;
  if (schemaPath) {
    try {
      const definition = (await load(schemaPath)).default;
      if (!definition || typeof definition.export !== "function") throw new Error("schema.ts must export a schema from defineSchema() as its default export.");
      schema = JSON.parse(definition.export());
      documentsProblem = await checkDocuments(definition);
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
  return { ok: true, value: { modules, schema, auth, documentsProblem } };
}

/** The first stored document the new schema refuses, as the backend reports it after a push; null when all match. */
async function checkDocuments(definition) {
  if (init.documents.length === 0) return null;
  const { database } = await startConvexTest(definition, []);
  const { jsonToConvex } = await import("convex/values");
  for (const [id, value] of init.documents) {
    // Writes are validated without their system fields.
    const fields = jsonToConvex(value);
    delete fields._id;
    delete fields._creationTime;
    const tableName = tableOfId(id);
    try {
      database._validate(tableName, fields);
    } catch (error) {
      return { tableName, error: `Document with ID "${id}" in table "${tableName}" does not match the schema: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  return null;
}

/**
 * convex-test keeps each test's state (its database fake) in an AsyncLocalStorage store that it
 * does not export; the store is picked up when it is first entered, so the documents can be loaded
 * from the server's store and every committed write reported.
 */
function captureConvexTestState() {
  let state;
  const run = AsyncLocalStorage.prototype.run;
  AsyncLocalStorage.prototype.run = function runAndCapture(store, callback, ...args) {
    if (state === undefined && store && typeof store === "object" && "components" in store && "transactionManager" in store) state = store;
    return run.call(this, store, callback, ...args);
  };
  return () => state;
}

/** convex-test's ids: a decimal counter, then the table's name. */
const ID_COUNTER = /^(\d+)/;

/** convex-test's ids end with their table's name after a decimal counter. */
const tableOfId = (id) => id.replace(ID_COUNTER, "");

/** A convex-test backend for this schema and these modules, its database and its state (syscalls included). */
async function startConvexTest(schema, paths) {
  const capturedState = captureConvexTestState();
  const { convexTest } = await import("convex-test");
  // convex-test finds the functions directory by its `_generated` folder.
  const modules = { "/functions/_generated/server.js": async () => ({}) };
  for (const modulePath of paths) modules[`/functions/${modulePath}`] = () => load(modulePath);
  const test = convexTest(schema, modules);
  await test.run(async () => undefined);
  const state = capturedState();
  const database = state?.components[""]?.db;
  if (!database) throw new Error("convex-test did not expose its database; the emulator needs the convex-test version it was built with.");
  return { test, database, state };
}

const CRONS_MODULE = "crons.js";

/** A cron schedule of `convex/crons.ts` other than an interval, as a cron expression (UTC). */
function cronExpression(schedule) {
  const minute = schedule.minuteUTC ?? 0;
  switch (schedule.type) {
    case "cron":
      return schedule.cron;
    case "hourly":
      return `${minute} * * * *`;
    case "daily":
      return `${minute} ${schedule.hourUTC} * * *`;
    case "weekly":
      return `${minute} ${schedule.hourUTC} * * ${schedule.dayOfWeek}`;
    case "monthly":
      return `${minute} ${schedule.hourUTC} ${schedule.day} * *`;
    default:
      throw new Error(`Unknown cron schedule type ${schedule.type}.`);
  }
}

/**
 * Runs the jobs of `convex/crons.ts` while the runner lives (convex-test does not run crons): an
 * interval job first runs one interval after the code went live; the others at their next time.
 * A job's failure is reported to the server's log, and the job keeps its schedule.
 */
async function startCrons(test, makeFunctionReference) {
  const { Cron } = await import("croner");
  const crons = (await load(CRONS_MODULE)).default?.crons ?? {};
  for (const [identifier, { name, args, schedule }] of Object.entries(crons)) {
    const [modulePath, exportName = "default"] = name.split(":");
    const fn = (await load(`${modulePath}.js`))[exportName];
    const kind = fn?.isAction ? "action" : fn?.isMutation ? "mutation" : "query";
    const run = () =>
      test[kind](makeFunctionReference(name), args?.[0] ?? {}).catch((error) => send({ type: "cronFailed", identifier, errorMessage: uncaught(error) }));
    if (schedule.type === "interval") {
      const periodMs = ((schedule.hours ?? 0) * 3600 + (schedule.minutes ?? 0) * 60 + (schedule.seconds ?? 0)) * 1000;
      setInterval(run, periodMs);
    } else {
      new Cron(cronExpression(schedule), { timezone: "UTC" }, run);
    }
  }
}

/** The log lines of the call running in this async context. */
const callLogs = new AsyncLocalStorage();

/** `console.*` inside a call becomes the call's log lines: level, the arguments as the backend words them (`'text'`), time. */
function captureConsole() {
  const levels = { log: "LOG", info: "INFO", warn: "WARN", error: "ERROR", debug: "DEBUG" };
  for (const [method, level] of Object.entries(levels)) {
    const original = console[method].bind(console);
    console[method] = (...args) => {
      const lines = callLogs.getStore();
      if (!lines) return original(...args);
      lines.push({ level, messages: args.map((arg) => (typeof arg === "string" ? `'${arg}'` : inspect(arg, { depth: 4 }))), timestamp: Date.now() });
    };
  }
}

/** Answers of the server to the questions sent to it, by id. */
const serverAnswers = new Map();
let nextAskId = 0;

/** Asks the server for what the runner cannot reach (network, blob store); its answer. */
function askServer(question) {
  const askId = nextAskId++;
  return new Promise((resolve) => {
    serverAnswers.set(askId, resolve);
    send({ type: "ask", askId, question });
  });
}
/** Statuses whose response has no body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * `fetch` of an action: the runner has no network, so the server makes the request, to addresses
 * outside this machine only (lib/emulator/outbound-fetch.ts). convex-test refuses it in queries and
 * mutations, as Convex does.
 */
async function proxiedFetch(input, init) {
  const request = new Request(input, init);
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
  const answer = await askServer({ kind: "fetch", request: { url: request.url, method: request.method, headers: [...request.headers], body } });
  if (!answer.ok) throw new TypeError(`fetch failed: ${answer.errorMessage}`);
  const { status, statusText, headers, body: responseBody } = answer.response;
  return new Response(NULL_BODY_STATUSES.has(status) ? null : responseBody, { status, statusText, headers });
}

/** The server's value for a storage question; its failure becomes the function's error. */
async function storageAnswer(question) {
  const answer = await askServer(question);
  if (!answer.ok) throw new Error(answer.errorMessage);
  return answer.value;
}

/**
 * File storage as the backend serves it (convex-test keeps files in memory, behind placeholder
 * URLs): bytes go to the server's blob store, upload URLs and file URLs are on the deployment's
 * own host, and `_storage` documents carry the content type.
 */
function serveStorage(state, database, { convexToJson }) {
  const asyncSyscall = state.asyncSyscall;
  const jsSyscall = state.jsSyscall;
  const fileDocument = (storageId) => database.get("_storage", storageId);
  const fileOf = (document) => ({ sha256: document.sha256, size: document.size, contentType: document.contentType ?? null });
  state.asyncSyscall = async (op, jsonArgs) => {
    switch (op) {
      case "1.0/storageGenerateUploadUrl":
        return JSON.stringify(await storageAnswer({ kind: "uploadUrl" }));
      case "1.0/storageGetUrl": {
        const { storageId } = JSON.parse(jsonArgs);
        return JSON.stringify(fileDocument(storageId) === null ? null : `${process.env.CONVEX_CLOUD_URL}/api/storage/${storageId}`);
      }
      case "1.0/storageGetMetadata": {
        const { storageId } = JSON.parse(jsonArgs);
        const document = fileDocument(storageId);
        return JSON.stringify(document === null ? null : convexToJson({ storageId, ...fileOf(document) }));
      }
      case "1.0/storageDelete": {
        const { storageId } = JSON.parse(jsonArgs);
        // Upstream's wording; the bytes go once the delete is committed.
        if (fileDocument(storageId) === null) throw new Error(`storage id ${storageId} not found`);
        return asyncSyscall(op, jsonArgs);
      }
      default:
        return asyncSyscall(op, jsonArgs);
    }
  };
  state.jsSyscall = async (op, args) => {
    switch (op) {
      case "storage/storeBlob": {
        const { blob } = args;
        return storageAnswer({ kind: "storeFile", bytes: new Uint8Array(await blob.arrayBuffer()), contentType: blob.type || null });
      }
      case "storage/getBlob": {
        const document = fileDocument(args.storageId);
        if (document === null) return null;
        const bytes = await storageAnswer({ kind: "readFile", file: fileOf(document) });
        return bytes === null ? null : new Blob([bytes], { type: document.contentType ?? "" });
      }
      default:
        return jsSyscall(op, args);
    }
  };
}

/** Adds the `_storage` document of bytes the server stored; its id. */
function insertFileDocument(test, database, { sha256, size, contentType }) {
  return test.run(async () => database.insert("_storage", { sha256, size, ...(contentType !== null && { contentType }) }));
}

async function serve() {
  captureConsole();
  globalThis.fetch = proxiedFetch;
  const { convexToJson, jsonToConvex } = await import("convex/values");
  const { makeFunctionReference } = await import("convex/server");
  const { test, database, state } = await startConvexTest(schemaPath ? (await load(schemaPath)).default : undefined, modulePaths);
  serveStorage(state, database, { convexToJson });

  let lastCounter = 0;
  let lastCreationTime = 0;
  for (const [id, value] of init.documents) {
    const document = jsonToConvex(value);
    database._documents[id] = document;
    lastCounter = Math.max(lastCounter, Number(ID_COUNTER.exec(id)?.[1] ?? 0));
    lastCreationTime = Math.max(lastCreationTime, document._creationTime);
  }
  database._nextDocId = Math.max(database._nextDocId, lastCounter + 1);
  database._lastCreationTime = Math.max(database._lastCreationTime, lastCreationTime);

  // A top-level commit applies its writes to the documents: report them before the call answers.
  const commit = database.commit.bind(database);
  database.commit = (commitTs) => {
    const ids = database._writes.length === 1 ? Object.keys(database._writes[0]) : [];
    commit(commitTs);
    if (ids.length === 0) return;
    const writes = ids.map((id) => [id, id in database._documents ? convexToJson(database._documents[id]) : null]);
    send({ type: "writes", writes });
  };

  // Jobs still pending when the last runner stopped are scheduled again (as new jobs: convex-test
  // arms a job when it is scheduled), so a restart loses no scheduled function.
  for (const [id, job] of Object.entries(database._documents)) {
    if (tableOfId(id) !== "_scheduled_functions" || job.state?.kind !== "pending") continue;
    delete database._documents[id];
    send({ type: "writes", writes: [[id, null]] });
    await test.run((ctx) => ctx.scheduler.runAt(job.scheduledTime, makeFunctionReference(job.name), job.args[0] ?? {}));
  }

  if (modulePaths.includes(CRONS_MODULE)) await startCrons(test, makeFunctionReference);

  /** An HTTP action's answer as plain data (status, header pairs, body base64). */
  async function fetchHttpAction({ path: requestPath, method, headers, body }, identity) {
    const caller = identity ? test.withIdentity(identity) : test;
    const response = await caller.fetch(requestPath, { method, headers, body: body === null ? undefined : Buffer.from(body, "base64") });
    return { status: response.status, headers: [...response.headers], body: Buffer.from(await response.arrayBuffer()).toString("base64") };
  }

  process.on("message", (message) => {
    if (message.type === "answer") {
      serverAnswers.get(message.askId)?.(message.answer);
      serverAnswers.delete(message.askId);
      return;
    }
    const { callId, call } = message;
    const logLines = [];
    void callLogs.run(logLines, async () => {
      try {
        let value;
        if (call.kind === "http") value = await fetchHttpAction(call.request, call.identity);
        else if (call.kind === "storeFile") value = await insertFileDocument(test, database, call.file);
        else {
          const caller = call.identity ? test.withIdentity(call.identity) : test;
          value = convexToJson((await caller[call.kind](makeFunctionReference(call.udfPath), jsonToConvex(call.args))) ?? null);
        }
        send({ type: "result", callId, ok: true, value, logLines });
      } catch (error) {
        const isConvexError = typeof error === "object" && error !== null && Symbol.for("ConvexError") in error;
        send({
          type: "result",
          callId,
          ok: false,
          errorMessage: isConvexError ? String(error.message) : uncaught(error),
          ...(isConvexError && { errorData: convexToJson(error.data ?? null) }),
          logLines,
        });
      }
    });
  });
  send({ type: "ready" });
}

if (mode === "serve") await serve();
else send({ type: "analysis", result: await analyse() });
