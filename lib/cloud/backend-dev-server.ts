import { setTimeout as delay } from "node:timers/promises";
import { FUNCTIONS_DIR } from "@/lib/app-names";
import { getConfig } from "@/lib/config";
import { createErrorReporter, type ErrorReporter } from "@/lib/devlog";
import { currentInstance } from "@/lib/instance";
import { log } from "@/lib/log";
import { registerSecret } from "@/lib/log/redact";
import { processSingleton } from "@/lib/singletons";
import type { Realtime } from "@/lib/realtime";
import {
  APP_DIR,
  findProcessesByRole,
  roleEnvs,
  stopProcessesByRole,
  type CommandHandle,
  type Sandbox,
} from "@/lib/sandbox";
import { shutdownSignal } from "@/lib/shutdown";
import { getStore } from "@/lib/store";
import {
  deleteDevServerLeaseOfSandbox,
  dropDevServerLease,
  getDevServerLease,
  takeDevServerLease,
} from "@/lib/store/dev-server-leases";
import type { InstanceIdentity } from "@/lib/store/instances";
import { isPushStartLine, pushOutcomeOf, type BackendPush } from "./backend-push";

export const BACKEND_DEV_SERVER_ROLE = "backend-dev-server";

/**
 * The backend dev server of both modes: the real CLI, non-interactive (`CI=1` also disables its
 * telemetry and colours), pushing to the hosted deployment or to the local emulated one. The URL
 * and admin key arrive only in the environment variables the CLI reads for a self-hosted
 * deployment, never as arguments: a process's command line is readable by every process of the
 * machine (`ps`), its environment only by its own user. The typecheck stays at the CLI's default (`try`: `tsc` runs before each
 * push when the app has TypeScript, and a type error stops the push), so type errors reach the
 * error channel with file and line. `--tail-logs always` prints the functions' logs and uncaught
 * errors (the deployment's `stream_function_logs`), even while a push runs.
 */
const DEFAULT_COMMAND = "npx convex dev --tail-logs always";

export interface BackendDevServerOptions {
  adminKey: string;
  deploymentUrl: string;
  /** Where error notifications go. @default getRealtime() */
  realtime?: Realtime;
  /** Multi-line error grouping delay. @default 500 */
  groupDelayMs?: number;
}

// Sandboxes whose backend dev server this process started (or connected to) and reads output
// from; it holds their lease (lib/store/dev-server-leases.ts). After a service restart or a
// reconnect the output stream is lost: such a server must be restarted, or on E2B connected to.
interface AttachedServer {
  sandbox: Sandbox;
  handle: CommandHandle;
  reporter: ErrorReporter;
  /** Settles once the server ended and its last buffered errors were published. */
  reported: Promise<void>;
  /** Its latest push, as its output tells; null for a server connected to until it reports one. */
  push: BackendPush | null;
  /** Called after each line that changed `push` was scanned. */
  pushWatchers: Set<() => void>;
}
const attached = () => processSingleton("attachedBackendDevServers", () => new Map<string, AttachedServer>());

/**
 * Whether some live instance reads the output of the backend dev server of a sandbox: this
 * process, or the live holder of the project's lease.
 */
export async function isBackendDevServerAttached(sandbox: Sandbox, projectId: string): Promise<boolean> {
  if (attached().has(sandbox.sandboxId)) return true;
  const lease = await getDevServerLease(await getStore(), projectId);
  return lease?.held === true && lease.sandboxId === sandbox.sandboxId;
}

const createReporter = (projectId: string, options: Pick<BackendDevServerOptions, "realtime" | "groupDelayMs">) =>
  createErrorReporter({ projectId, source: "backend-dev", realtime: options.realtime, groupDelayMs: options.groupDelayMs });

type PushOutput = Pick<AttachedServer, "push" | "pushWatchers">;

const newPushOutput = (push: BackendPush | null): PushOutput => ({ push, pushWatchers: new Set() });

/** A server's output: every line to the error scanner, and push starts and outcomes into `server.push`. */
function readOutput(server: PushOutput, reporter: ErrorReporter): (line: string) => void {
  return (line) => {
    const at = new Date();
    const outcome = pushOutcomeOf(line);
    const started = !outcome && isPushStartLine(line);
    if (started) server.push = { state: "pushing", at, startedAt: at };
    if (outcome) server.push = { state: outcome, at, startedAt: server.push?.startedAt ?? at };
    reporter.write(line);
    if (started || outcome) for (const watcher of server.pushWatchers) watcher();
  };
}

/** Tracks a server whose output `reporter` scans; when it ends, flushes and drops its lease. */
function track(
  sandbox: Sandbox,
  projectId: string,
  owner: InstanceIdentity,
  { handle, reporter, output }: { handle: CommandHandle; reporter: ErrorReporter; output: PushOutput },
): void {
  const ended = async () => {
    if (attached().get(sandbox.sandboxId)?.handle === handle) attached().delete(sandbox.sandboxId);
    await reporter.close();
    // A server that ended with this process (a signal to its whole process group also ends the
    // local command host) is left for the next owner, who restarts it.
    if (shutdownSignal().aborted) return;
    // Guarded by owner and pid: a lease handed back or taken by a newer server stays.
    await dropDevServerLease(await getStore(), projectId, owner, handle.pid).catch((error: unknown) =>
      log.warn("dropping the lease of an ended backend dev server failed", { projectId, error }),
    );
  };
  // The same object the output reader updates, so the push state stays live.
  attached().set(sandbox.sandboxId, Object.assign(output, { sandbox, handle, reporter, reported: handle.wait().then(ended, ended) }));
}

/**
 * Stops reading every attached server's output (shutdown, after the leases were handed back):
 * E2B servers keep running for the next owner to connect to; the others end with this process
 * anyway, so they are stopped now and the next owner restarts them at once. Resolves once their
 * buffered errors were published.
 */
export async function detachBackendDevServers(): Promise<void> {
  const servers = [...attached()];
  attached().clear();
  await Promise.all(
    servers.map(async ([, { sandbox, handle, reporter }]) => {
      await (sandbox.commands.connect ? handle.disconnect() : handle.kill()).catch((error: unknown) =>
        log.warn("detaching a backend dev server failed", { sandboxId: sandbox.sandboxId, error }),
      );
      await reporter.close();
    }),
  );
}

/** The latest push of the backend dev server this process reads the output of; null when it reads none. */
export function backendPushOf(sandbox: Sandbox): BackendPush | null {
  const push = attached().get(sandbox.sandboxId)?.push;
  return push ? { ...push } : null;
}

/**
 * The outcome of the first push that the backend dev server this process reads started after
 * `since` (its start line arrived later), once the errors it printed were published. Null when
 * no such server is attached, or it ended first. Rejects with `signal`'s reason when aborted.
 */
export async function untilPushStartedAfter(sandbox: Sandbox, since: Date, signal: AbortSignal): Promise<BackendPush | null> {
  const server = attached().get(sandbox.sandboxId);
  if (!server) return null;
  const outcome = () => {
    const push = server.push;
    return push && push.state !== "pushing" && push.startedAt > since ? { ...push } : null;
  };
  const push = await new Promise<BackendPush | null>((resolve, reject) => {
    const settle = () => {
      const done = outcome() ?? (signal.aborted || attached().get(sandbox.sandboxId) !== server ? null : undefined);
      if (done === undefined) return;
      server.pushWatchers.delete(settle);
      signal.removeEventListener("abort", settle);
      if (done === null && signal.aborted) reject(signal.reason);
      else resolve(done);
    };
    server.pushWatchers.add(settle);
    signal.addEventListener("abort", settle);
    void server.handle.wait().then(settle, settle);
    settle();
  });
  // A failed push's error group may still wait in the scanner (its grouping delay).
  if (push) await server.reporter.flush();
  return push;
}

/** The module of the CLI's codegen the app imports (`api.ts` when convex.json asks for TypeScript codegen). */
const GENERATED_API_FILES = ["api.js", "api.ts"].map((file) => `${APP_DIR}/${FUNCTIONS_DIR}/_generated/${file}`);

/** Whether the app has the backend's generated API module (`convex/_generated/api.js`). */
export async function hasGeneratedApi(sandbox: Sandbox): Promise<boolean> {
  for (const file of GENERATED_API_FILES) if (await sandbox.files.exists(file)) return true;
  return false;
}

/**
 * Resolves once the backend dev server this process reads has generated the app's API module,
 * reported its first push outcome (codegen comes before the push; a failed one leaves the module
 * to a later push), or ended; at the latest after `timeoutMs`. Answers whether the module exists.
 */
export async function untilGeneratedApi(sandbox: Sandbox, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await hasGeneratedApi(sandbox)) return true;
    const server = attached().get(sandbox.sandboxId);
    if (!server || server.push?.state !== "pushing" || Date.now() > deadline) return false;
    await delay(250);
  }
}

/** Whether the backend dev server of a sandbox is running. */
export async function isBackendDevServerRunning(sandbox: Sandbox): Promise<boolean> {
  return (await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).length > 0;
}

/**
 * Stops the backend dev server; false when none ran. When this process was reading its output,
 * resolves only after the errors it had buffered were published.
 */
export async function stopBackendDevServer(sandbox: Sandbox): Promise<boolean> {
  const server = attached().get(sandbox.sandboxId);
  // First, so no instance brings it back.
  await deleteDevServerLeaseOfSandbox(await getStore(), sandbox.sandboxId);
  const stopped = (await stopProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)) > 0;
  await server?.reported;
  return stopped;
}

/**
 * Spec 4.5 startBackendDevServer: (re)starts the backend dev server in the background with no
 * command timeout (E2B's default 60 s would kill it), its output fed line by line to the error
 * scanner, which publishes to `<project_id>-errors`. Any previous instance is stopped first, so
 * there is never more than one, and a server whose output stream was lost (service restart,
 * reconnect) is replaced by one we are attached to. Returns false when it could not start.
 */
export async function startBackendDevServer(
  sandbox: Sandbox,
  projectId: string,
  options: BackendDevServerOptions,
): Promise<boolean> {
  const config = getConfig();
  registerSecret(options.adminKey);
  const command = config.BACKEND_DEV_COMMAND ?? DEFAULT_COMMAND;
  const reporter = createReporter(projectId, options);
  try {
    const db = await getStore();
    const owner = await currentInstance(db);
    await stopBackendDevServer(sandbox);
    const startedAt = new Date();
    const output = newPushOutput({ state: "pushing", at: startedAt, startedAt });
    const read = readOutput(output, reporter);
    const handle = await sandbox.commands.run(command, {
      background: true,
      cwd: APP_DIR,
      timeoutMs: 0,
      envs: {
        ...roleEnvs(BACKEND_DEV_SERVER_ROLE),
        CONVEX_SELF_HOSTED_URL: options.deploymentUrl,
        CONVEX_SELF_HOSTED_ADMIN_KEY: options.adminKey,
        CI: "1",
      },
      onStdout: read,
      onStderr: read,
    });
    // Taken once the server runs (a failed start leaves no lease), before tracking it (a server
    // that ended already drops it).
    await takeDevServerLease(db, { projectId, sandboxId: sandbox.sandboxId, owner, pid: handle.pid });
    track(sandbox, projectId, owner, { handle, reporter, output });
    return true;
  } catch (error) {
    await reporter.close();
    log.warn("backend dev server did not start", { projectId, error });
    return false;
  }
}

/**
 * Reads the output of a backend dev server another instance started, from now on (E2B: the
 * process outlives the instance that started it). The caller holds the project's lease. False
 * when the driver cannot connect to commands or no backend dev server runs as `pid`.
 */
export async function connectBackendDevServer(
  sandbox: Sandbox,
  projectId: string,
  pid: number,
  options: Pick<BackendDevServerOptions, "realtime" | "groupDelayMs"> = {},
): Promise<boolean> {
  const connect = sandbox.commands.connect?.bind(sandbox.commands);
  if (!connect || !(await findProcessesByRole(sandbox, BACKEND_DEV_SERVER_ROLE)).some((info) => info.pid === pid)) return false;
  const reporter = createReporter(projectId, options);
  try {
    const output = newPushOutput(null);
    const read = readOutput(output, reporter);
    const handle = await connect(pid, { onStdout: read, onStderr: read });
    track(sandbox, projectId, await currentInstance(await getStore()), { handle, reporter, output });
    return true;
  } catch (error) {
    await reporter.close();
    log.warn("connecting to the backend dev server failed", { projectId, error });
    return false;
  }
}
