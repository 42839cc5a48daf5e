import { createHash, createHmac, randomInt, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

interface Frame {
  event: string;
  channel?: string;
  data?: unknown;
}

/**
 * A test-only Pusher Channels server (protocol 7 over WebSocket) for pusher-js: it checks the
 * `auth` of every private-channel subscription against the app secret, as Pusher does, and
 * delivers triggered events to subscribers. Triggers arrive through `handleTrigger`, which checks
 * the REST request's signature (wire it to an HTTP double of the REST API).
 */
export async function startFakePusher(options: { appId: string; key: string; secret: string }) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const subscriptions = new Map<string, Set<WebSocket>>();
  /** Channels whose subscription was refused for a wrong signature. */
  const refused: string[] = [];
  const sign = (text: string) => createHmac("sha256", options.secret).update(text).digest("hex");
  const send = (socket: WebSocket, frame: Frame) => socket.send(JSON.stringify(frame));

  function validAuth(socketId: string, channel: string, auth: unknown): boolean {
    const expected = Buffer.from(`${options.key}:${sign(`${socketId}:${channel}`)}`);
    const given = Buffer.from(typeof auth === "string" ? auth : "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  server.on("connection", (socket, request) => {
    if (!request.url?.startsWith(`/app/${options.key}?`)) {
      send(socket, { event: "pusher:error", data: { code: 4001, message: "App key not in this cluster" } });
      socket.close(4001);
      return;
    }
    const socketId = `${randomInt(1, 2 ** 31)}.${randomInt(1, 2 ** 31)}`;
    send(socket, { event: "pusher:connection_established", data: JSON.stringify({ socket_id: socketId, activity_timeout: 120 }) });
    socket.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as Frame;
      const data = (typeof frame.data === "string" ? JSON.parse(frame.data) : frame.data) as { channel?: string; auth?: string };
      if (frame.event === "pusher:ping") return send(socket, { event: "pusher:pong", data: {} });
      if (frame.event === "pusher:unsubscribe" && data.channel) return subscriptions.get(data.channel)?.delete(socket);
      if (frame.event !== "pusher:subscribe" || !data.channel) return;
      const channel = data.channel;
      if (channel.startsWith("private-") && !validAuth(socketId, channel, data.auth)) {
        refused.push(channel);
        return send(socket, { event: "pusher:error", data: { code: null, message: `Invalid signature for ${channel}` } });
      }
      const set = subscriptions.get(channel) ?? new Set<WebSocket>();
      set.add(socket);
      subscriptions.set(channel, set);
      send(socket, { event: "pusher_internal:subscription_succeeded", channel, data: "{}" });
    });
    socket.on("close", () => {
      for (const set of subscriptions.values()) set.delete(socket);
    });
  });

  /** Checks a REST trigger the way Pusher does (body MD5, HMAC-SHA256 query signature) and delivers it. */
  function handleTrigger(url: URL, rawBody: string): { status: number; body: string } {
    const params = Object.fromEntries(url.searchParams);
    const signed = Object.keys(params)
      .filter((name) => name !== "auth_signature")
      .sort()
      .map((name) => `${name}=${params[name]}`)
      .join("&");
    const valid =
      params.auth_key === options.key &&
      params.body_md5 === createHash("md5").update(rawBody).digest("hex") &&
      url.pathname === `/apps/${options.appId}/events` &&
      params.auth_signature === sign(`POST\n${url.pathname}\n${signed}`);
    if (!valid) return { status: 401, body: "Invalid signature" };
    const body = JSON.parse(rawBody) as { name: string; channels: string[]; data: string };
    for (const channel of body.channels) {
      for (const socket of subscriptions.get(channel) ?? []) send(socket, { event: body.name, channel, data: body.data });
    }
    return { status: 200, body: "{}" };
  }

  return {
    port: (server.address() as AddressInfo).port,
    refused,
    subscriberCount: (channel: string) => subscriptions.get(channel)?.size ?? 0,
    handleTrigger,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
