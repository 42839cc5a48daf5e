// The service's HTTP front, on loopback. Three kinds of traffic, told apart per request:
// - `E2b-Sandbox-Id` header: envd traffic of that sandbox (what the SDK sends to E2B_SANDBOX_URL),
//   checked against the sandbox's envd access token and passed to its agent's socket;
// - Host `<port>-<sandboxId>.<domain>` (what `sandbox.getHost(port)` answers): HTTP and WebSocket
//   traffic to that port of the sandbox's own loopback, through a tunnel the agent opens;
// - anything else: E2B's lifecycle REST API, authenticated with the `X-API-Key` header.
import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import { ApiError } from "./errors.mjs";
import { ENVD_VERSION } from "./sandboxes.mjs";

/** envd's port inside an E2B sandbox: the SDK names it in `E2b-Sandbox-Port`. */
const ENVD_PORT = 49983;
const MAX_JSON_BYTES = 1024 * 1024;

const sameSecret = (given, expected) => {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const sendJson = (res, status, body) => {
  if (res.headersSent) return void res.destroy();
  if (body === undefined) return void res.writeHead(status).end();
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

const sendError = (res, status, message) => sendJson(res, status, { code: status, message });

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_JSON_BYTES) throw new ApiError(413, "request body too large");
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not an object");
    return body;
  } catch {
    throw new ApiError(400, "request body must be a JSON object");
  }
}

/** Opens a byte tunnel to `port` on the sandbox's loopback through its agent. */
function openTunnel(sandbox, port) {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath: sandbox.socketPath, method: "CONNECT", path: `127.0.0.1:${port}` });
    request.on("connect", (res, socket) => {
      if (res.statusCode === 200) resolve(socket);
      else {
        socket.destroy();
        reject(new ApiError(502, `nothing answers on port ${port} of sandbox ${sandbox.id}`));
      }
    });
    request.on("error", () => reject(new ApiError(502, `sandbox ${sandbox.id} is not answering`)));
    request.end();
  });
}

/**
 * @param {{ apiKey: string, domain: string, registry: ReturnType<typeof import("./sandboxes.mjs").createSandboxRegistry> }} options
 *   `domain` is read per request: it may be known only once the server listens.
 */
export function createServiceServer(options) {
  const { apiKey, registry } = options;
  const hostPatternOf = (domain) => new RegExp(`^(\\d+)-([a-z0-9]+)\\.${domain.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "i");

  const describe = (sandbox) => ({
    sandboxID: sandbox.id,
    templateID: sandbox.templateID,
    clientID: "local",
    envdVersion: ENVD_VERSION,
    envdAccessToken: sandbox.envdAccessToken,
    domain: options.domain,
  });

  const info = (sandbox) => ({
    ...describe(sandbox),
    metadata: sandbox.metadata,
    startedAt: sandbox.startedAt.toISOString(),
    endAt: sandbox.endAt.toISOString(),
    state: sandbox.state,
    cpuCount: 1,
    memoryMB: 0,
    diskSizeMB: 0,
  });

  /** Which sandbox and port a request is for, or `null` for the lifecycle API. */
  const routeOf = (req) => {
    const id = req.headers["e2b-sandbox-id"];
    if (typeof id === "string") return { id, port: Number(req.headers["e2b-sandbox-port"] ?? ENVD_PORT), viaHeader: true };
    const host = hostPatternOf(options.domain).exec(req.headers.host ?? "");
    return host ? { id: host[2], port: Number(host[1]), viaHeader: false } : null;
  };

  /** The running sandbox a request is for; envd traffic must carry the sandbox's access token. */
  const targetOf = (req, route) => {
    const sandbox = registry.list().find((candidate) => candidate.id === route.id);
    if (!sandbox || sandbox.state !== "running") throw new ApiError(502, `sandbox ${route.id} is not running`);
    if (route.port === ENVD_PORT && !sameSecret(req.headers["x-access-token"], sandbox.envdAccessToken)) {
      throw new ApiError(401, "invalid or missing X-Access-Token");
    }
    return sandbox;
  };

  const proxyToAgent = (req, res, sandbox) => {
    const upstream = http.request({ socketPath: sandbox.socketPath, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => sendError(res, 502, `sandbox ${sandbox.id} is not answering`));
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  };

  const proxyToPort = async (req, res, sandbox, port) => {
    const tunnel = await openTunnel(sandbox, port);
    const upstream = http.request({ createConnection: () => tunnel, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => sendError(res, 502, `port ${port} of sandbox ${sandbox.id} closed the connection`));
    res.on("close", () => tunnel.destroy());
    req.pipe(upstream);
  };

  const lifecycle = async (req, res) => {
    if (!sameSecret(req.headers["x-api-key"], apiKey)) throw new ApiError(401, "invalid or missing X-API-Key");
    const { pathname } = new URL(req.url ?? "/", "http://service");
    const segments = pathname.split("/").filter(Boolean);
    const [first, second, third, fourth] = segments[0] === "v2" ? segments.slice(1) : segments;
    if (first !== "sandboxes") throw new ApiError(404, `no route ${req.method} ${pathname}`);
    const method = req.method;
    if (second === undefined) {
      if (method === "POST") return sendJson(res, 201, describe(await registry.create(await readJson(req))));
      if (method === "GET") return sendJson(res, 200, registry.list().map(info));
    } else if (third === undefined && fourth === undefined) {
      if (method === "GET") return sendJson(res, 200, info(registry.get(second)));
      if (method === "DELETE") return sendJson(res, 204, await registry.kill(second));
    } else if (method === "POST" && fourth === undefined) {
      if (third === "timeout") {
        const { timeout } = await readJson(req);
        if (!(Number.isInteger(timeout) && timeout >= 0)) throw new ApiError(400, "timeout must be a whole number of seconds");
        return sendJson(res, 204, registry.setTimeout(second, timeout));
      }
      if (third === "pause") return sendJson(res, 204, await registry.pause(second));
      if (third === "connect" || third === "resume") {
        const { timeout } = await readJson(req);
        if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 0)) throw new ApiError(400, "timeout must be a whole number of seconds");
        const { sandbox, resumed } = await registry.connect(second, { timeout });
        return sendJson(res, resumed ? 201 : 200, describe(sandbox));
      }
    }
    throw new ApiError(404, `no route ${method} ${pathname}`);
  };

  const server = http.createServer(async (req, res) => {
    try {
      const route = routeOf(req);
      if (!route) return await lifecycle(req, res);
      const sandbox = targetOf(req, route);
      if (route.port === ENVD_PORT) return proxyToAgent(req, res, sandbox);
      await proxyToPort(req, res, sandbox, route.port);
    } catch (error) {
      if (error instanceof ApiError) sendError(res, error.status, error.message);
      else sendError(res, 503, `sandbox service failed: ${error?.message ?? error}`);
    }
  });
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  // Longer than clients keep idle connections (undici: 4 s), so a client never reuses a
  // connection the service is closing at that moment, even with a stalled event loop.
  server.keepAliveTimeout = 65_000;

  // WebSocket (Metro's hot reload) and other upgrades to a sandbox's port: a raw tunnel.
  server.on("upgrade", async (req, socket, head) => {
    socket.on("error", () => undefined);
    try {
      const route = routeOf(req);
      if (!route || route.port === ENVD_PORT) throw new ApiError(404, "upgrades reach sandbox ports only");
      const tunnel = await openTunnel(targetOf(req, route), route.port);
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let index = 0; index < req.rawHeaders.length; index += 2) lines.push(`${req.rawHeaders[index]}: ${req.rawHeaders[index + 1]}`);
      tunnel.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length) tunnel.write(head);
      tunnel.pipe(socket);
      socket.pipe(tunnel);
      tunnel.on("error", () => socket.destroy());
      socket.on("close", () => tunnel.destroy());
    } catch (error) {
      const status = error instanceof ApiError ? error.status : 503;
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    }
  });
  return server;
}
