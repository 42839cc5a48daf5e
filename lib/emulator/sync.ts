import type http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { log } from "@/lib/log";
import type { FunctionResult } from "./deployment";

/**
 * The deployment's sync WebSocket (`/api/<client version>/sync`), reduced to what the `convex` CLI
 * needs for `env get` / `env list`: it subscribes to one system query with an admin key, takes the
 * first result and closes. Queries are answered once (no live updates); mutations and actions fail.
 */

const SYNC_PATH = /^\/api\/[^/]+\/sync$/;

const clientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("Connect") }),
  z.object({ type: z.literal("Authenticate"), tokenType: z.string(), value: z.string().optional(), baseVersion: z.number().int() }),
  z.object({
    type: z.literal("ModifyQuerySet"),
    baseVersion: z.number().int(),
    newVersion: z.number().int(),
    modifications: z.array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("Add"), queryId: z.number().int(), udfPath: z.string(), args: z.array(z.unknown()) }),
        z.object({ type: z.literal("Remove"), queryId: z.number().int() }),
      ]),
    ),
  }),
  z.object({ type: z.enum(["Mutation", "Action"]), requestId: z.number().int() }),
  z.object({ type: z.literal("Event") }),
]);

type ClientMessage = z.output<typeof clientMessage>;

/** What one deployment's socket can do: check an admin key and run a system query. */
export interface SyncBackend {
  authorize(key: string): Promise<boolean>;
  run(udfPath: string, args: unknown[]): Promise<FunctionResult>;
}

/** The protocol's timestamps are u64 little-endian, base64. */
function encodeTs(ts: number): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(ts));
  return bytes.toString("base64");
}

/** State of one connection: the versions the client last saw and whether its key was accepted. */
class SyncSession {
  private querySet = 0;
  private identity = 0;
  private ts = 0;
  private admin = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly backend: SyncBackend,
  ) {}

  private send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Moves the client from the versions it has to the new ones, with these query changes. */
  private transition(next: { querySet?: number; identity?: number }, modifications: unknown[]): void {
    const start = { querySet: this.querySet, identity: this.identity, ts: encodeTs(this.ts) };
    this.querySet = next.querySet ?? this.querySet;
    this.identity = next.identity ?? this.identity;
    this.ts += 1;
    this.send({ type: "Transition", startVersion: start, endVersion: { querySet: this.querySet, identity: this.identity, ts: encodeTs(this.ts) }, modifications });
  }

  async receive(message: ClientMessage): Promise<void> {
    switch (message.type) {
      case "Authenticate": {
        this.admin = message.tokenType === "Admin" && message.value !== undefined && (await this.backend.authorize(message.value));
        if (!this.admin) {
          this.send({ type: "AuthError", error: "The provided admin key was invalid for this deployment.", baseVersion: message.baseVersion, authUpdateAttempted: true });
          return;
        }
        this.transition({ identity: message.baseVersion + 1 }, []);
        return;
      }
      case "ModifyQuerySet": {
        const modifications = await Promise.all(message.modifications.map((change) => this.answer(change)));
        this.transition({ querySet: message.newVersion }, modifications);
        return;
      }
      case "Mutation":
      case "Action":
        this.send({
          type: `${message.type}Response`,
          requestId: message.requestId,
          success: false,
          result: `The local emulator does not run ${message.type.toLowerCase()}s.`,
          logLines: [],
        });
        return;
      default:
        return;
    }
  }

  private async answer(change: Extract<ClientMessage, { type: "ModifyQuerySet" }>["modifications"][number]): Promise<unknown> {
    if (change.type === "Remove") return { type: "QueryRemoved", queryId: change.queryId };
    const result: FunctionResult = this.admin
      ? await this.backend.run(change.udfPath, change.args)
      : { ok: false, errorMessage: "Unauthenticated: this emulator only answers queries sent with an admin key." };
    return result.ok
      ? { type: "QueryUpdated", queryId: change.queryId, value: result.value ?? null, logLines: [], journal: null }
      : { type: "QueryFailed", queryId: change.queryId, errorMessage: result.errorMessage, logLines: [], errorData: null, journal: null };
  }
}

/** An upgrade handler speaking the sync protocol for one deployment; other paths are refused. */
export function syncUpgradeHandler(backend: SyncBackend): (request: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  const server = new WebSocketServer({ noServer: true });
  return (request, socket, head) => {
    if (!SYNC_PATH.test(new URL(request.url ?? "/", "http://127.0.0.1").pathname)) {
      socket.destroy();
      return;
    }
    server.handleUpgrade(request, socket, head, (ws) => {
      const session = new SyncSession(ws, backend);
      // Messages are handled one after another, in the order they came.
      let queue = Promise.resolve();
      ws.on("message", (data) => {
        queue = queue.then(async () => {
          const parsed = clientMessage.safeParse(JSON.parse(String(data)));
          if (parsed.success) await session.receive(parsed.data);
        }).catch((error: unknown) => {
          log.error("emulator sync message failed", { error });
          ws.send(JSON.stringify({ type: "FatalError", error: "InternalServerError" }));
          ws.close();
        });
      });
    });
  };
}
