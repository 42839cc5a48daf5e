// The in-sandbox agent: our own small envd. One runs per sandbox, as the first process inside its
// wall, serving envd's process and filesystem services, `/files` and `/health` on a unix socket
// in the sandbox's runtime directory; the service in front routes a sandbox's envd traffic
// there. `CONNECT 127.0.0.1:<port>` opens a tunnel to a port of the sandbox's own loopback (how
// the service reaches the sandbox's dev servers). It also listens on the ports of the host's
// loopback the sandbox may reach (the emulated deployments' range, SANDBOX_AGENT_LOOPBACK_PORTS)
// and carries each connection out through the wall's socket for it. Only Node's built-ins: the wall shows this
// directory and node, nothing else of the service.
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import { serveConnect } from "./connect.mjs";
import { serveFiles } from "./files-http.mjs";
import { createFilesystemService } from "./filesystem.mjs";
import { createProcessService } from "./processes.mjs";

const socketPath = process.env.SANDBOX_AGENT_SOCKET ?? "/run/sandbox/envd.sock";
const home = process.env.HOME ?? "/home/user";
// Commands get the sandbox's environment, not the agent's own settings.
const baseEnv = { ...process.env };
delete baseEnv.SANDBOX_AGENT_SOCKET;
delete baseEnv.SANDBOX_AGENT_LOOPBACK_PORTS;
delete baseEnv.SANDBOX_AGENT_LOOPBACK_SOCKET;

const processes = createProcessService({ baseEnv, home });
const filesystem = createFilesystemService({ home });
const methods = { ...processes.methods, ...filesystem.methods };

const server = http.createServer(async (req, res) => {
  try {
    if (req.url === "/health") return void res.writeHead(204).end();
    if (await serveFiles(req, res, { home })) return;
    if (await serveConnect(req, res, methods)) return;
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: 404, message: "not found" }));
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ code: 500, message: String(error) }));
    else res.destroy();
  }
});
// Long-lived streams (a dev server's output, watchers) must not be cut by Node's defaults.
server.requestTimeout = 0;
server.headersTimeout = 0;
server.keepAliveTimeout = 5_000;

server.on("connect", (req, clientSocket, head) => {
  const port = Number(/^127\.0\.0\.1:(\d+)$/.exec(req.url ?? "")?.[1]);
  if (!(port > 0 && port < 65536)) return void clientSocket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
  const upstream = net.connect(port, "127.0.0.1", () => {
    clientSocket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    upstream.pipe(clientSocket);
    clientSocket.pipe(upstream);
  });
  upstream.on("error", () => clientSocket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
  clientSocket.on("error", () => upstream.destroy());
});

const shutdown = () => {
  for (const command of processes.commands.values()) command.killGroup();
  filesystem.closeAll();
  server.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

/**
 * Listens on 127.0.0.1:<port> for every port of `first-last`; each connection goes out through
 * the wall's socket, which carries it to the host's same port. A port something else holds
 * already is left to it.
 */
function listenLoopbackRange(range, outsideSocket) {
  const [first, last] = range.split("-").map(Number);
  const listening = [];
  for (let port = first; port <= last; port++) {
    const listener = net.createServer((inside) => {
      // Written first: a socket queues writes in order until it connects.
      const outside = net.connect(outsideSocket);
      outside.write(`${port}\n`);
      inside.pipe(outside).pipe(inside);
      inside.on("error", () => outside.destroy());
      outside.on("error", () => inside.destroy());
      inside.on("close", () => outside.destroy());
      outside.on("close", () => inside.destroy());
    });
    listening.push(
      new Promise((resolve) => {
        listener.once("error", resolve);
        listener.listen(port, "127.0.0.1", resolve);
      }),
    );
  }
  return Promise.all(listening);
}

const loopbackPorts = process.env.SANDBOX_AGENT_LOOPBACK_PORTS;
const loopbackSocket = process.env.SANDBOX_AGENT_LOOPBACK_SOCKET;
await (loopbackPorts && loopbackSocket ? listenLoopbackRange(loopbackPorts, loopbackSocket) : undefined);
fs.rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write("ready\n"));
