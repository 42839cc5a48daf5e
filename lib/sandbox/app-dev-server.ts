import { setTimeout as delay } from "node:timers/promises";
import { getConfig } from "@/lib/config";
import { ConflictError } from "@/lib/errors";
import { SandboxError, SandboxTimeoutError } from "./errors";
import { APP_DIR, type CommandHandle, type OutputListener, type Sandbox, type SandboxDriverName } from "./port";
import { findProcessesByRole, roleEnvs, stopProcessesByRole } from "./processes";

/** Role tag of the app's dev server (see {@link findProcessesByRole}). */
export const APP_DEV_SERVER_ROLE = "app-dev-server";

/** Port the app dev server listens on in a sandbox with its own network (Metro's default). */
export const APP_DEV_PORT = 8081;

/** What runs when `APP_DEV_COMMAND` is unset; the command reads its port from `$PORT`. */
const DRIVER_DEFAULTS: Record<SandboxDriverName, { command: string; scheme: "http" | "https" }> = {
  // The template's dependency-free preview server: starts in milliseconds, needs no install.
  local: { command: "node preview-server.mjs", scheme: "http" },
  e2b: { command: "npx expo start --port $PORT --host lan", scheme: "https" },
};

export interface AppDevServerOptions {
  /** Shell command run in the app directory with `PORT` set. @default APP_DEV_COMMAND, else per driver */
  command?: string;
  /** Extra environment variables for the dev server. */
  envs?: Record<string, string>;
  /** Receives the server's output line by line (error scanning). */
  onStdout?: OutputListener;
  onStderr?: OutputListener;
  /** How long to wait for the preview URL to answer; `0` returns as soon as the command started. @default 60_000 */
  readyTimeoutMs?: number;
}

export interface AppDevServer {
  handle: CommandHandle;
  port: number;
  /** Where a browser reaches the app, e.g. `http://localhost:41234` or `https://8081-<id>.e2b.app`. */
  previewUrl: string;
}

const previewUrlFor = (sandbox: Sandbox, port: number) => `${DRIVER_DEFAULTS[sandbox.driver].scheme}://${sandbox.getHost(port)}`;

/** The preview URL of a sandbox's app dev server, whether or not it is running. */
export async function getAppPreviewUrl(sandbox: Sandbox): Promise<string> {
  return previewUrlFor(sandbox, await sandbox.reservePort("app", APP_DEV_PORT));
}

/**
 * Polls the URL until it answers below 500 (a 404 is an answer; E2B's proxy says 502 while
 * nothing listens); fails early when the server exits.
 */
async function waitUntilAnswering(url: string, handle: CommandHandle, timeoutMs: number): Promise<void> {
  let exit: unknown;
  handle.wait().then(
    (result) => (exit ??= result),
    (error: unknown) => (exit ??= error),
  );
  const deadline = Date.now() + timeoutMs;
  for (let pause = 10; ; pause = Math.min(Math.ceil(pause * 1.5), 500)) {
    const answered = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5_000) }).then(
      async (response) => (await response.body?.cancel(), response.status < 500),
      () => false,
    );
    if (answered) return;
    if (exit !== undefined) {
      const reason = exit instanceof Error ? exit.message : "it exited";
      throw new SandboxError(`The app dev server stopped before it answered: ${reason}`, { code: "app_dev_server_failed" });
    }
    if (Date.now() > deadline) {
      await handle.kill();
      throw new SandboxTimeoutError(`The app dev server did not answer at ${url} within ${timeoutMs} ms.`);
    }
    await delay(pause);
  }
}

/**
 * Starts the app's dev server in the background (no command timeout) and waits until the
 * preview URL answers. Throws `ConflictError` when one is already running: use
 * {@link restartAppDevServer} to replace it.
 */
export async function startAppDevServer(sandbox: Sandbox, options: AppDevServerOptions = {}): Promise<AppDevServer> {
  if ((await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).length > 0) {
    throw new ConflictError("The app dev server is already running.", "app_dev_server_running");
  }
  const port = await sandbox.reservePort("app", APP_DEV_PORT);
  const previewUrl = previewUrlFor(sandbox, port);
  const command = options.command ?? getConfig().APP_DEV_COMMAND ?? DRIVER_DEFAULTS[sandbox.driver].command;
  const handle = await sandbox.commands.run(command, {
    background: true,
    cwd: APP_DIR,
    envs: { ...options.envs, PORT: String(port), ...roleEnvs(APP_DEV_SERVER_ROLE) },
    timeoutMs: 0,
    onStdout: options.onStdout,
    onStderr: options.onStderr,
  });
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  if (readyTimeoutMs > 0) await waitUntilAnswering(previewUrl, handle, readyTimeoutMs);
  return { handle, port, previewUrl };
}

/**
 * Starts the app dev server unless one runs, and answers its preview URL. For whoever needs
 * the preview (screenshots, the dashboard): after a service restart or a sandbox restart,
 * nothing runs until someone starts it.
 */
export async function ensureAppDevServer(sandbox: Sandbox, options: AppDevServerOptions = {}): Promise<string> {
  if ((await findProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)).length > 0) return getAppPreviewUrl(sandbox);
  return (await startAppDevServer(sandbox, options)).previewUrl;
}

/** Stops the app dev server; `false` when none was running. */
export async function stopAppDevServer(sandbox: Sandbox): Promise<boolean> {
  return (await stopProcessesByRole(sandbox, APP_DEV_SERVER_ROLE)) > 0;
}

/** Stops the app dev server if it runs and starts it again (it re-reads `.env.local`). */
export async function restartAppDevServer(sandbox: Sandbox, options: AppDevServerOptions = {}): Promise<AppDevServer> {
  await stopAppDevServer(sandbox);
  return startAppDevServer(sandbox, options);
}
