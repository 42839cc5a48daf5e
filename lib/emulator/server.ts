import http from "node:http";
import type { AddressInfo } from "node:net";
import { log } from "@/lib/log";
import { EMULATOR_DASHBOARD_PREFIX, EMULATOR_MOUNT_PATH } from "./identity";
import { createEmulator, type Emulator, type EmulatorOptions } from "./index";

export interface EmulatorServer {
  /** `http://127.0.0.1:<port>/emulator`: the provision host of this emulator. */
  baseUrl: string;
  /** Dashboard host of this emulator (OAuth consent page). */
  dashboardUrl: string;
  port: number;
  emulator: Emulator;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Converts a Node request into a fetch Request; the signal aborts when the client goes away. */
async function toRequest(req: http.IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(origin + (req.url ?? "/"), {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
    signal,
  });
}

async function writeResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}

/**
 * Serves an emulator through node:http on 127.0.0.1 (tests, benchmarks), mounted at /emulator
 * like the app route. `port` 0 (default) picks a free port.
 */
export async function startEmulatorServer(options: EmulatorOptions & { port?: number; emulator?: Emulator } = {}): Promise<EmulatorServer> {
  const emulator = options.emulator ?? createEmulator(options);
  const server = http.createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const origin = `http://${req.headers.host ?? "127.0.0.1"}`;
    toRequest(req, origin, controller.signal)
      .then((request) => emulator.handle(request))
      .then((response) => writeResponse(res, response))
      .catch((error: unknown) => {
        log.error("emulator server failed to answer", { error });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}${EMULATOR_MOUNT_PATH}`;
  return {
    baseUrl,
    dashboardUrl: baseUrl + EMULATOR_DASHBOARD_PREFIX,
    port,
    emulator,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
