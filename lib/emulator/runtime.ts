import { log } from "@/lib/log";
import type { Sql } from "@/lib/store";
import { FunctionLogs, formatLogLine, type FunctionExecution, type LogLine } from "./function-log";
import { deploymentUrlForPort } from "./listeners";
import { pushDirectory, writePushModules } from "./modules";
import { outboundFetch, type OutboundRequest } from "./outbound-fetch";
import { startRunnerProcess, type RunnerProcess } from "./runner-process";
import type { DeploymentFiles, StoredFile } from "./storage";
import { applyDocumentWrites, applyDocumentWritesInBatches, findPush, listDocuments, listEnvVars, listPushModules, type DocumentWrite, type EmulatorDeployment, type PushRecord } from "./store";

/** What the runtimes need of the emulator's context (lib/emulator/context.ts holds them, among others). */
export interface RuntimeContext {
  db: Sql;
  /** Where pushed modules are written for the runners that load them. */
  modulesDir: string;
  /** The deployments' file storage. */
  files: DeploymentFiles;
  now: () => Date;
}

/**
 * Runs the live code of emulated deployments: one runner per deployment (`function-runner.mjs` in
 * "serve" mode, a walled child process: runner-process.ts) holding its documents in convex-test's
 * database, started on the first call and stopped by the next push. Committed writes are persisted
 * in the store, in commit order, before the call that made them answers, so a restarted runner (or
 * server) starts from the same data. A runner that dies (killed, out of memory) fails the calls it
 * ran; the next call starts a new one.
 */

export type FunctionKind = "query" | "mutation" | "action";

/** The identity a function sees in `ctx.auth.getUserIdentity()`. */
export type UserIdentity = Record<string, unknown> & { subject: string; issuer: string };

/** An HTTP request to the deployment's HTTP actions (`convex/http.ts`), body base64. */
export interface HttpActionRequest {
  /** Path and query string. */
  path: string;
  method: string;
  headers: [string, string][];
  body: string | null;
}

/** The answer of an HTTP action, body base64. */
export interface HttpActionResponse {
  status: number;
  headers: [string, string][];
  body: string;
}

export type FunctionCall =
  | {
      kind: FunctionKind;
      /** `module:export`, module without extension. */
      udfPath: string;
      /** The arguments object, convex JSON. */
      args: unknown;
      identity?: UserIdentity | null;
    }
  | { kind: "http"; request: HttpActionRequest; identity?: UserIdentity | null };

/** What the runner asks the server for: an action's fetch, or file storage the runner cannot reach. */
type RunnerQuestion =
  | { kind: "fetch"; request: OutboundRequest }
  | { kind: "uploadUrl" }
  | { kind: "storeFile"; bytes: Uint8Array; contentType: string | null }
  | { kind: "readFile"; file: StoredFile };

/** What a call answers: its value (convex JSON), or the error the client sees; `logLines` are what it printed. */
export type CallResult = ({ ok: true; value: unknown } | { ok: false; errorMessage: string; errorData?: unknown }) & { logLines?: string[] };

/** Longest run of one call, per kind (the backend's limits: 1 s of queries and mutations, 10 min of actions; looser here for loaded machines). */
export const FUNCTION_TIMEOUT_MS: Record<FunctionKind, number> = { query: 10_000, mutation: 10_000, action: 600_000 };

export interface RunningRunner {
  runner: RunnerProcess;
  pushId: string;
  pending: Map<number, (result: CallResult, logLines: LogLine[]) => void>;
  /** Persistence of the writes reported so far, in order. */
  persisted: Promise<void>;
}

type RunnerMessage =
  | { type: "ready" }
  | { type: "cronFailed"; identifier: string; errorMessage: string }
  | { type: "writes"; writes: DocumentWrite[] }
  | { type: "ask"; askId: number; question: RunnerQuestion }
  | ({ type: "result"; callId: number; logLines: LogLine[] } & ({ ok: true; value: unknown } | { ok: false; errorMessage: string; errorData?: unknown }));

const UDF_TYPES = { query: "Query", mutation: "Mutation", action: "Action", http: "HttpAction" } as const;

/** The log stream's record of one call. */
function execution(call: FunctionCall, result: CallResult, logLines: LogLine[], startedMs: number, callId: number): FunctionExecution {
  const finishedMs = Date.now();
  return {
    kind: "Completion",
    udfType: UDF_TYPES[call.kind],
    identifier: call.kind === "http" ? `${call.request.method} ${call.request.path.split("?")[0]}` : call.udfPath,
    logLines: logLines.map((line) => ({ ...line, isTruncated: false })),
    timestamp: finishedMs / 1000,
    executionTime: (finishedMs - startedMs) / 1000,
    error: result.ok ? null : result.errorMessage,
    cachedResult: false,
    caller: call.kind === "http" ? "HttpEndpoint" : "SyncWorker",
    requestId: `emulated-${callId}`,
    executionId: `emulated-${callId}`,
    environment: "isolate",
    identityType: call.kind !== "http" && call.identity ? "user" : "unknown",
  };
}

export class FunctionRuntimes {
  /** The recent executions per deployment (`/api/stream_function_logs`). */
  readonly logs = new FunctionLogs();
  private readonly running = new Map<string, Promise<RunningRunner>>();
  /** The live push of each deployment, read once: only this emulator's listener pushes to it (replaceCode forgets it). */
  private readonly livePushes = new Map<string, Promise<PushRecord | null>>();
  private nextCallId = 0;

  constructor(
    private readonly timeoutMs: Record<FunctionKind, number> = FUNCTION_TIMEOUT_MS,
    /** Called after the writes of a commit were persisted, and after new code went live (subscriptions re-run their queries). */
    private readonly onCommit: (deploymentName: string, writes: readonly DocumentWrite[]) => void = () => undefined,
  ) {}

  /** The deployment's runner on this push, started if needed (also at server start, so scheduled functions run without a call). */
  async runner(context: RuntimeContext, deployment: EmulatorDeployment, push: PushRecord): Promise<RunningRunner> {
    let running = this.running.get(deployment.name);
    // A runner of older code (pushed through another emulator of this process) is replaced once.
    if (running && (await running.catch(() => null))?.pushId !== push.id && this.running.get(deployment.name) === running) await this.stop(deployment.name);
    running = this.running.get(deployment.name);
    if (!running) {
      running = this.start(context, deployment, push);
      this.running.set(deployment.name, running);
      running.catch(() => this.running.delete(deployment.name));
    }
    return running;
  }

  /** Runs one function (or HTTP action) of the deployment's live push. */
  async call(context: RuntimeContext, deployment: EmulatorDeployment, push: PushRecord, call: FunctionCall): Promise<CallResult> {
    const callId = this.nextCallId++;
    // HTTP actions run under the action limit, as upstream.
    const limit = this.timeoutMs[call.kind === "http" ? "action" : call.kind];
    const started = Date.now();
    const result = await this.dispatch(context, deployment, push, callId, call, limit);
    this.logs.record(deployment.name, execution(call, result.result, result.logLines, started, callId));
    return { ...result.result, logLines: result.logLines.map(formatLogLine) };
  }

  /**
   * Adds the `_storage` document of a file whose bytes were just stored (an upload, an action's
   * `ctx.storage.store`); its id. The deployment needs live code (the runner holds its documents).
   */
  async storeFile(context: RuntimeContext, deployment: EmulatorDeployment, bytes: Uint8Array, contentType: string | null): Promise<string> {
    const push = await this.livePush(context, deployment.name);
    if (!push) throw new Error(`Deployment ${deployment.name} has no code to store files with.`);
    return context.files.store(deployment.name, bytes, contentType, async (file) => {
      const { result } = await this.dispatch(context, deployment, push, this.nextCallId++, { kind: "storeFile", file }, this.timeoutMs.mutation);
      if (!result.ok) throw new Error(`The file's document was not written: ${result.errorMessage}`);
      return result.value as string;
    });
  }

  /** Sends one call to the deployment's runner and waits for its answer or its time limit. */
  private async dispatch(
    context: RuntimeContext,
    deployment: EmulatorDeployment,
    push: PushRecord,
    callId: number,
    call: FunctionCall | { kind: "storeFile"; file: StoredFile },
    limit: number,
  ): Promise<{ result: CallResult; logLines: LogLine[] }> {
    let current = await this.runner(context, deployment, push);
    // A runner that died a moment ago, before its exit was handled, is replaced now.
    if (!current.runner.child.connected) {
      await this.stop(deployment.name);
      current = await this.runner(context, deployment, push);
    }
    return new Promise<{ result: CallResult; logLines: LogLine[] }>((resolve) => {
      const timer = setTimeout(() => {
        // A function that does not return holds the runner: only a new runner ends it.
        current.pending.delete(callId);
        resolve({ result: { ok: false, errorMessage: `Function execution timed out (maximum duration: ${limit / 1000}s).` }, logLines: [] });
        void this.stop(deployment.name);
      }, limit);
      current.pending.set(callId, (answer, logLines) => {
        clearTimeout(timer);
        resolve({ result: answer, logLines });
      });
      current.runner.child.send({ callId, call });
    });
  }

  /** The server's answer to a runner's question. */
  private async answer(context: RuntimeContext, deployment: EmulatorDeployment, question: RunnerQuestion): Promise<unknown> {
    if (question.kind === "fetch") return outboundFetch(question.request);
    try {
      if (question.kind === "uploadUrl") return { ok: true, value: await context.files.uploadUrl(context.db, deployment, context.now()) };
      if (question.kind === "readFile") return { ok: true, value: await context.files.read(deployment.name, question.file) };
      return { ok: true, value: await this.storeFile(context, deployment, question.bytes, question.contentType) };
    } catch (error) {
      log.warn("emulated file storage failed", { deployment: deployment.name, error });
      return { ok: false, errorMessage: "The deployment's file storage is unavailable; try again." };
    }
  }

  private async start(context: RuntimeContext, deployment: EmulatorDeployment, push: PushRecord): Promise<RunningRunner> {
    const modules = await listPushModules(context.db, push.id);
    const dir = await writePushModules(pushDirectory(context.modulesDir, deployment.name, push.id), modules);
    const variables = await listEnvVars(context.db, deployment.name);
    const url = deployment.port === null ? "" : deploymentUrlForPort(deployment.port);
    const schemaPath = modules.find((pushed) => pushed.path === "schema.js")?.path ?? null;
    const runner = await startRunnerProcess({
      dir,
      env: { ...Object.fromEntries(variables.map((variable) => [variable.name, variable.value])), CONVEX_CLOUD_URL: url, CONVEX_SITE_URL: url },
      init: { mode: "serve", modulePaths: Object.keys(push.analysis), schemaPath, documents: await listDocuments(context.db, deployment.name) },
    });
    const child = runner.child;
    const running: RunningRunner = { runner, pushId: push.id, pending: new Map(), persisted: Promise.resolve() };
    const fail = (errorMessage: string) => {
      for (const settle of running.pending.values()) settle({ ok: false, errorMessage }, []);
      running.pending.clear();
    };
    return new Promise<RunningRunner>((resolve, reject) => {
      child.on("message", (message: RunnerMessage) => {
        if (message.type === "ready") resolve(running);
        else if (message.type === "ask") {
          void this.answer(context, deployment, message.question).then((answer) => child.connected && child.send({ type: "answer", askId: message.askId, answer }));
        } else if (message.type === "cronFailed") log.warn("emulated cron job failed", { deployment: deployment.name, job: message.identifier, error: message.errorMessage });
        else if (message.type === "writes") {
          running.persisted = running.persisted
            .then(() => context.db.transaction((tx) => applyDocumentWrites(tx, deployment.name, message.writes)))
            .then(() => {
              this.onCommit(deployment.name, message.writes);
              // A deleted file's bytes go once no document names them.
              if (message.writes.some(([id, value]) => value === null && id.endsWith("_storage"))) {
                void context.files.sweep(context.db, deployment.name).catch((error) => log.warn("deleted files' blobs not removed", { deployment: deployment.name, error }));
              }
            })
            .catch((error) => log.error("emulated deployment writes not persisted", { deployment: deployment.name, error }));
        } else {
          const { callId, logLines } = message;
          const result: CallResult = message.ok ? { ok: true, value: message.value } : { ok: false, errorMessage: message.errorMessage, errorData: message.errorData };
          void running.persisted.then(() => {
            running.pending.get(callId)?.(result, logLines);
            running.pending.delete(callId);
          });
        }
      });
      // A failed spawn, or a message to a runner that just died (its exit fails the calls).
      child.on("error", (error) => {
        reject(error);
        log.warn("emulated function runtime error", { deployment: deployment.name, error });
      });
      child.once("exit", (code, signal) => {
        const reason = runner.stderrTail() || `exit code ${code}, signal ${signal}`;
        reject(new Error(`The function runtime exited before it was ready: ${reason}`));
        fail("The function runtime stopped while the function ran.");
        this.forget(deployment.name, running);
      });
    });
  }

  /** Drops the map entry if it still points at this runner. */
  private forget(name: string, running: RunningRunner): void {
    void this.running.get(name)?.then(
      (current) => current === running && this.running.delete(name),
      () => undefined,
    );
  }

  /** The deployment's live push (null before the first). */
  livePush(context: RuntimeContext, name: string): Promise<PushRecord | null> {
    let push = this.livePushes.get(name);
    if (!push) {
      push = findPush(context.db, name);
      this.livePushes.set(name, push);
      push.catch(() => this.livePushes.delete(name));
    }
    return push;
  }

  /**
   * Writes documents from outside the deployment's functions (an import: each id at most once
   * after its deletion). The runner holds the documents it loaded and numbers new ids after them,
   * so it is stopped before the write (it cannot commit over the new documents) and again after
   * it (one a call started meanwhile loaded the old ones); the next call loads them all.
   */
  async writeDocuments(context: RuntimeContext, name: string, writes: readonly DocumentWrite[]): Promise<void> {
    await this.stop(name);
    await context.db.transaction((tx) => applyDocumentWritesInBatches(tx, name, writes));
    await this.stop(name);
    this.onCommit(name, writes);
  }

  /** A new push went live: its runner is replaced and subscribers re-run their queries on the new code. */
  async replaceCode(name: string): Promise<void> {
    this.livePushes.delete(name);
    await this.stop(name);
    this.onCommit(name, []);
  }

  /** Stops a deployment's runner (a new push, a stuck function, a deleted project); the next call starts a fresh one. */
  async stop(name: string): Promise<void> {
    this.livePushes.delete(name);
    const running = this.running.get(name);
    this.running.delete(name);
    const current = await running?.catch(() => null);
    current?.runner.kill();
  }

  /** Stops every runner (shutdown, test teardown). */
  async close(): Promise<void> {
    await Promise.all([...this.running.keys()].map((name) => this.stop(name)));
  }
}
