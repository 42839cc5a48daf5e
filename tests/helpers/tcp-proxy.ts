import net from "node:net";

/**
 * A loopback TCP proxy in front of a service (PostgreSQL, Redis) that a test cuts and restores:
 * to the clients the same fault as the service restarting (open connections drop, new ones are
 * refused), without touching the machine's shared service.
 */
export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once("error", end);
    upstream.once("error", end);
    client.once("close", end);
    upstream.once("close", end);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const stop = () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  return { port, cut: stop, restore: () => listen(port), close: stop };
}
