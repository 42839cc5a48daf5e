import fs from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { EgressRefusedError, resolvePublicAddress } from "./address-policy";

/** HTTP(S) on its standard ports only: the proxy is for registries and APIs, not a general TCP relay (mail, databases). */
const EGRESS_PORTS = new Set([80, 443]);

/** A listener outside the sandbox on a unix socket that the sandbox reaches through its runtime directory. */
export interface SocketListener {
  close(): Promise<void>;
}

async function listenOnSocket(server: net.Server, socketPath: string): Promise<SocketListener> {
  // Tracked so closing ends tunnels too: an HTTP server forgets a socket once it became a CONNECT tunnel.
  const connections = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
  });
  await fs.rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The sandbox's user is not root: connecting to a unix socket needs write permission on it.
  await fs.chmod(socketPath, 0o666);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      }),
  };
}

function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
}

/** Carries every connection to the socket on to a fixed target (a loopback forward's outside end). */
export function listenForward(socketPath: string, target: { host: string; port: number }): Promise<SocketListener> {
  const server = net.createServer((inside) => splice(inside, net.connect(target.port, target.host)));
  return listenOnSocket(server, socketPath);
}

/** Longest first line of a loopback-range connection: `65535\n`. */
const PORT_LINE_BYTES = 6;

/**
 * The outside end of a sandbox's loopback range: each connection starts with `<port>\n` and is
 * carried to that port of this machine's 127.0.0.1 when it lies in `range`; anything else is closed.
 */
export function listenLoopbackRange(socketPath: string, range: { first: number; last: number }): Promise<SocketListener> {
  const server = net.createServer((inside) => {
    inside.on("error", () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf(0x0a);
      if (end < 0) {
        if (buffered.length >= PORT_LINE_BYTES) inside.destroy();
        return;
      }
      inside.off("data", onData);
      inside.pause();
      const line = buffered.subarray(0, end).toString("latin1");
      const port = Number(line);
      if (!/^\d{1,5}$/.test(line) || port < range.first || port > range.last) return void inside.destroy();
      const rest = buffered.subarray(end + 1);
      const outside = net.connect(port, "127.0.0.1");
      if (rest.length > 0) outside.write(rest);
      splice(inside, outside);
      inside.resume();
    };
    inside.on("data", onData);
  });
  return listenOnSocket(server, socketPath);
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

function statusOf(error: unknown): number {
  return error instanceof EgressRefusedError ? 403 : 502;
}

/** host:port of a CONNECT request, IPv6 in brackets. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) return undefined;
  return { host: match[1], port };
}

async function tunnel(request: http.IncomingMessage, inside: Duplex, head: Buffer): Promise<void> {
  const target = parseAuthority(request.url ?? "");
  if (!target) return refuse(inside, 400, "CONNECT needs host:port");
  if (!EGRESS_PORTS.has(target.port)) return refuse(inside, 403, `egress refused: port ${target.port} (HTTP(S) ports only)`);
  let address: string;
  try {
    address = await resolvePublicAddress(target.host);
  } catch (error) {
    return refuse(inside, statusOf(error), (error as Error).message);
  }
  const outside = net.connect(target.port, address);
  outside.once("error", (error) => refuse(inside, 502, `egress: ${error.message}`));
  outside.once("connect", () => {
    outside.removeAllListeners("error");
    inside.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) outside.write(head);
    splice(inside, outside);
  });
}

/** Hop-by-hop and proxy headers a forward proxy must not pass on. */
const DROPPED_HEADERS = new Set(["proxy-authorization", "proxy-connection", "connection", "keep-alive", "te", "trailer", "upgrade"]);

async function forward(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  let url: URL;
  try {
    url = new URL(request.url ?? "");
  } catch {
    response.writeHead(400, { "content-type": "text/plain" }).end("a proxy request needs an absolute http:// URL\n");
    return;
  }
  if (url.protocol !== "http:") {
    response.writeHead(400, { "content-type": "text/plain" }).end("only http:// is forwarded; use CONNECT for https\n");
    return;
  }
  const port = Number(url.port || 80);
  if (!EGRESS_PORTS.has(port)) {
    response.writeHead(403, { "content-type": "text/plain" }).end(`egress refused: port ${port} (HTTP(S) ports only)\n`);
    return;
  }
  let address: string;
  try {
    address = await resolvePublicAddress(url.hostname);
  } catch (error) {
    response.writeHead(statusOf(error), { "content-type": "text/plain" }).end(`${(error as Error).message}\n`);
    return;
  }
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !DROPPED_HEADERS.has(name)));
  const upstream = http.request(
    { host: address, port, method: request.method, path: `${url.pathname}${url.search}`, headers, setHost: false },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  upstream.on("error", (error) => {
    if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end(`egress: ${error.message}\n`);
    else response.destroy();
  });
  request.pipe(upstream);
}

/**
 * The sandbox's egress proxy, outside its network namespace: HTTP CONNECT tunnels and plain HTTP
 * forwards, each only to public addresses resolved here (see address-policy.ts).
 */
export function listenEgressProxy(socketPath: string): Promise<SocketListener> {
  const server = http.createServer((request, response) => void forward(request, response));
  server.on("connect", (request: http.IncomingMessage, inside: Duplex, head: Buffer) => {
    inside.on("error", () => undefined);
    void tunnel(request, inside, head);
  });
  return listenOnSocket(server, socketPath);
}
