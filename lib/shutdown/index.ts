import type http from "node:http";
import { log } from "@/lib/log";
import { processSingleton, resetProcessSingletons } from "@/lib/singletons";

/** Work done at shutdown once requests are drained: hand leases back, stop taking jobs. */
export type DrainStep = () => Promise<unknown>;

interface ShutdownState {
  steps: { name: string; run: DrainStep }[];
  /** Aborted when the shutdown starts. */
  started: AbortController;
}

// A process singleton (on globalThis): Next.js loads instrumentation and routes in bundles of
// their own, and a step registered by any of them must run.
const state = () => processSingleton<ShutdownState>("shutdown", () => ({ steps: [], started: new AbortController() }));

/** Adds a step to the shutdown sequence; steps run in registration order. */
export function registerDrainStep(name: string, run: DrainStep): void {
  state().steps.push({ name, run });
}

/**
 * Aborted when the shutdown starts. Responses that never end by themselves (SSE streams) end
 * then, so they do not hold the drain; their clients reconnect, to another instance.
 */
export const shutdownSignal = (): AbortSignal => state().started.signal;

/** Where scripts/server.mjs publishes its HTTP server, so the shutdown can drain it. */
export const HTTP_SERVER_KEY = Symbol.for("cloud-backend-service.httpServer");

/** The custom server's listener (scripts/server.mjs); none under `next dev` or in tests. */
export const publishedHttpServer = (): http.Server | undefined =>
  (globalThis as Record<symbol, http.Server | undefined>)[HTTP_SERVER_KEY];

/**
 * Stops accepting connections and resolves once every in-flight request has been answered, or
 * after `drainMs`, when the connections still open are closed. Idle keep-alive connections are
 * closed at once.
 */
async function drainRequests(server: http.Server, drainMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // close() leaves the keep-alive connections that were busy serving, and Node goes on serving
  // them: each closes right after its next answer.
  server.keepAliveTimeout = 1;
  server.prependListener("request", (_request, response: http.ServerResponse) => {
    response.shouldKeepAlive = false;
  });
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), drainMs)));
  if ((await Promise.race([closed, bound])) === "timeout") {
    log.warn("requests still running at the end of the shutdown drain; closing their connections", { drainMs });
    server.closeAllConnections();
    await closed;
  }
  clearTimeout(timer);
}

export interface ShutdownOptions {
  /** The listener to drain. @default the one scripts/server.mjs published, if any */
  server?: http.Server;
  /** How long in-flight requests may run. */
  drainMs: number;
}

/**
 * The graceful shutdown (SIGTERM, SIGINT): stop accepting connections, end the streams that
 * follow {@link shutdownSignal}, let in-flight requests finish (bounded by `drainMs`), run the
 * registered drain steps in order (a failing one is logged, the others still run), then close
 * every process singleton, the store last. The caller exits.
 */
export async function shutDown(options: ShutdownOptions): Promise<void> {
  const server = options.server ?? publishedHttpServer();
  const { steps, started } = state();
  started.abort();
  if (server) await drainRequests(server, options.drainMs);
  for (const step of steps.splice(0)) {
    await step.run().catch((error: unknown) => log.error("shutdown step failed", { step: step.name, error }));
  }
  await resetProcessSingletons();
}
