import { setTimeout as delay } from "node:timers/promises";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { ConflictError } from "@/lib/errors";
import {
  APP_DIR,
  fetchPreview,
  findProcessesByRole,
  roleEnvs,
  SandboxError,
  SandboxTimeoutError,
  stopProcessesByRole,
  type CommandHandle,
  type OutputListener,
  type Sandbox,
  type SandboxDriverName,
} from "@/lib/sandbox";

/** Role tag of the app's dev server (see {@link findProcessesByRole}). */
export const APP_DEV_SERVER_ROLE = "app-dev-server";

/** Port the app dev server listens on in a sandbox with its own network (Metro's default). */
export const APP_DEV_PORT = 8081;

/**
 * What runs when `APP_DEV_COMMAND` is unset: Expo's own dev server (Metro), which serves the app
 * as React Native Web renders it. Local sandboxes run it offline: the machine may reach nothing
 * but the npm registry, and Expo's online checks would only stall the start.
 */
const DRIVER_DEFAULTS: Record<SandboxDriverName, { command: string; scheme: "http" | "https" }> = {
  local: { command: "npx expo start --web --port $PORT --offline", scheme: "http" },
  "local-unwalled": { command: "npx expo start --web --port $PORT --offline", scheme: "http" },
  e2b: { command: "npx expo start --web --port $PORT --host lan", scheme: "https" },
};

/** Keeps Expo from opening a browser or sending telemetry from a headless sandbox. */
const EXPO_ENVS = { BROWSER: "none", EXPO_NO_TELEMETRY: "1" };

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
    const answered = await fetchPreview(url, { redirect: "manual", signal: AbortSignal.timeout(5_000) }).then(
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
 * Asks Metro for the page's script bundles once, without waiting: Metro bundles on the first
 * request, so the first visitor (a person or a screenshot) finds the bundle built.
 */
async function warmUpBundle(previewUrl: string): Promise<void> {
  try {
    const page = await fetchPreview(previewUrl, { signal: AbortSignal.timeout(10_000) }).then((response) => response.text());
    const scripts = [...page.matchAll(/<script[^>]+src="([^"]+)"/g)].map((match) => new URL(match[1].replaceAll("&amp;", "&"), previewUrl));
    await Promise.all(scripts.map((url) => fetchPreview(url.href, { signal: AbortSignal.timeout(300_000) }).then((response) => response.arrayBuffer())));
  } catch (error) {
    log.debug("warming up the app bundle failed", { previewUrl, error });
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
    envs: { ...EXPO_ENVS, ...options.envs, PORT: String(port), ...roleEnvs(APP_DEV_SERVER_ROLE) },
    timeoutMs: 0,
    onStdout: options.onStdout,
    onStderr: options.onStderr,
  });
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  if (readyTimeoutMs > 0) {
    await waitUntilAnswering(previewUrl, handle, readyTimeoutMs);
    void warmUpBundle(previewUrl);
  }
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
