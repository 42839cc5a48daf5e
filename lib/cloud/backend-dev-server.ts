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
import { pushOutcomeOf, type BackendPush } from "./backend-push";

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

/** A server's output: every line to the error scanner, and push outcomes into `server.push`. */
function readOutput(server: Pick<AttachedServer, "push">, reporter: ErrorReporter): (line: string) => void {
  return (line) => {
    const outcome = pushOutcomeOf(line);
    if (outcome) server.push = { state: outcome, at: new Date() };
    reporter.write(line);
  };
}

/** Tracks a server whose output `reporter` scans; when it ends, flushes and drops its lease. */
function track(
  sandbox: Sandbox,
  projectId: string,
  owner: InstanceIdentity,
  { handle, reporter, output }: { handle: CommandHandle; reporter: ErrorReporter; output: Pick<AttachedServer, "push"> },
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
    const output: Pick<AttachedServer, "push"> = { push: { state: "pushing", at: new Date() } };
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
    const output: Pick<AttachedServer, "push"> = { push: null };
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
