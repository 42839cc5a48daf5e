import { getConfig } from "@/lib/config";
import { createErrorReporter } from "@/lib/devlog";
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
import { pushOutcomeOf, type BackendPush } from "./backend-push";

export const BACKEND_DEV_SERVER_ROLE = "backend-dev-server";

/**
 * The backend dev server of both modes: the real CLI, non-interactive (`CI=1` also disables its
 * telemetry and colours), pushing to the hosted deployment or to the local emulated one. The URL
 * and admin key arrive as environment variables of the process, so they never appear in the
 * command text we log. The typecheck stays at the CLI's default (`try`: `tsc` runs before each
 * push when the app has TypeScript, and a type error stops the push), so type errors reach the
 * error channel with file and line. `--tail-logs always` prints the functions' logs and uncaught
 * errors (the deployment's `stream_function_logs`), even while a push runs.
 */
const DEFAULT_COMMAND = 'npx convex dev --url "$BACKEND_DEPLOYMENT_URL" --admin-key "$BACKEND_ADMIN_KEY" --tail-logs always';

export interface BackendDevServerOptions {
  adminKey: string;
  deploymentUrl: string;
  /** Where error notifications go. @default getRealtime() */
  realtime?: Realtime;
  /** Multi-line error grouping delay. @default 500 */
  groupDelayMs?: number;
}

// Sandboxes whose backend dev server this process started and still reads output from. After a
// service restart or a reconnect the output stream is lost: such a server must be restarted.
interface AttachedServer {
  handle: CommandHandle;
  /** Settles once the server ended and its last buffered errors were published. */
  reported: Promise<void>;
  /** Its latest push, as its output tells. */
  push: BackendPush;
}
const attached = () => processSingleton("attachedBackendDevServers", () => new Map<string, AttachedServer>());

/** Whether this process is reading the backend dev server's output of a sandbox. */
export function isBackendDevServerAttached(sandbox: Sandbox): boolean {
  return attached().has(sandbox.sandboxId);
}

/** The latest push of the backend dev server this process reads the output of; null when it reads none. */
export function backendPushOf(sandbox: Sandbox): BackendPush | null {
  const push = attached().get(sandbox.sandboxId)?.push;
  return push ? { ...push } : null;
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
  const reporter = createErrorReporter({
    projectId,
    source: "backend-dev",
    realtime: options.realtime,
    groupDelayMs: options.groupDelayMs,
  });
  try {
    await stopBackendDevServer(sandbox);
    const push: BackendPush = { state: "pushing", at: new Date() };
    const read = (line: string) => {
      const outcome = pushOutcomeOf(line);
      if (outcome) Object.assign(push, { state: outcome, at: new Date() });
      reporter.write(line);
    };
    const handle = await sandbox.commands.run(command, {
      background: true,
      cwd: APP_DIR,
      timeoutMs: 0,
      envs: {
        ...roleEnvs(BACKEND_DEV_SERVER_ROLE),
        BACKEND_DEPLOYMENT_URL: options.deploymentUrl,
        BACKEND_ADMIN_KEY: options.adminKey,
        CI: "1",
      },
      onStdout: read,
      onStderr: read,
    });
    // Flush what is buffered when the server ends, whatever the reason.
    const ended = async () => {
      if (attached().get(sandbox.sandboxId)?.handle === handle) attached().delete(sandbox.sandboxId);
      await reporter.close();
    };
    attached().set(sandbox.sandboxId, { handle, reported: handle.wait().then(ended, ended), push });
    return true;
  } catch (error) {
    await reporter.close();
    log.warn("backend dev server did not start", { projectId, error });
    return false;
  }
}
