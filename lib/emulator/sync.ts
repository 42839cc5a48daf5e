import type http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { log } from "@/lib/log";
import type { FunctionRequest } from "./functions-api";
import type { CallResult, UserIdentity } from "./runtime";

/**
 * The deployment's sync WebSocket (`/api/<client version>/sync`), the protocol of the `convex`
 * browser client (ConvexReactClient, ConvexClient) and of the CLI's `env get` / `env list`:
 * query-set changes, mutations, actions and authentication (admin keys, and user tokens checked
 * against the pushed auth providers).
 * After every commit of the deployment each session re-runs its queries and sends what changed in
 * one Transition; a mutation's response is followed by a transition, so the client sees its writes
 * when the mutation resolves. A Ping every {@link PING_INTERVAL_MS} keeps idle clients from
 * reconnecting (they give up on a server silent for 60 s).
 */

const SYNC_PATH = /^\/api\/([^/]+)\/sync$/;
/** The client versions whose protocol this server speaks: the `convex` package's 1.x. */
const KNOWN_CLIENT_VERSION = /^1\.\d+\.\d+(?:-[\w.]+)?$/;
const PING_INTERVAL_MS = 15_000;

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
  z.object({ type: z.enum(["Mutation", "Action"]), requestId: z.number().int(), udfPath: z.string(), args: z.array(z.unknown()) }),
  z.object({ type: z.literal("Event") }),
]);

type ClientMessage = z.output<typeof clientMessage>;

/** What one deployment's socket can do: check an admin key, run functions, hear about commits. */
export interface SyncBackend {
  authorize(key: string): Promise<boolean>;
  /** The identity of a user token; throws when the pushed auth providers refuse it. */
  verify(token: string): Promise<UserIdentity>;
  run(request: FunctionRequest): Promise<CallResult>;
  /** Calls `listener` after every commit of the deployment; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

/** The protocol's timestamps are u64 little-endian, base64. */
function encodeTs(ts: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(ts);
  return bytes.toString("base64");
}

let lastTs = 0n;

/** A timestamp (nanoseconds) later than every one handed out before in this process. */
function nextTs(): bigint {
  const now = BigInt(Date.now()) * 1_000_000n;
  lastTs = now > lastTs ? now : lastTs + 1n;
  return lastTs;
}

type QueryModification =
  | { type: "QueryUpdated"; queryId: number; value: unknown; logLines: string[]; journal: null }
  | { type: "QueryFailed"; queryId: number; errorMessage: string; logLines: string[]; errorData: unknown; journal: null }
  | { type: "QueryRemoved"; queryId: number };

/** The first element of the protocol's `args: [argsObject]`. */
const argsObject = (args: unknown[]) => args[0] ?? {};

/** State of one connection: the versions the client last saw, its key, and its subscribed queries with their last answers. */
class SyncSession {
  private querySet = 0;
  private identity = 0;
  private ts = 0n;
  private admin = false;
  private user: UserIdentity | null = null;
  private readonly queries = new Map<number, { udfPath: string; args: unknown; answer: string }>();

  constructor(
    private readonly socket: WebSocket,
    private readonly backend: SyncBackend,
  ) {}

  private send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Moves the client from the versions it has to the new ones, with these query changes. */
  private transition(next: { querySet?: number; identity?: number }, modifications: QueryModification[]): void {
    const start = { querySet: this.querySet, identity: this.identity, ts: encodeTs(this.ts) };
    this.querySet = next.querySet ?? this.querySet;
    this.identity = next.identity ?? this.identity;
    this.ts = nextTs();
    this.send({ type: "Transition", startVersion: start, endVersion: { querySet: this.querySet, identity: this.identity, ts: encodeTs(this.ts) }, modifications });
  }

  async receive(message: ClientMessage): Promise<void> {
    switch (message.type) {
      case "Authenticate": {
        const accepted = await this.authenticate(message);
        if (!accepted.ok) {
          this.send({ type: "AuthError", error: accepted.error, baseVersion: message.baseVersion, authUpdateAttempted: true });
          return;
        }
        this.transition({ identity: message.baseVersion + 1 }, await this.rerun());
        return;
      }
      case "ModifyQuerySet": {
        const modifications: QueryModification[] = [];
        for (const change of message.modifications) {
          if (change.type === "Remove") {
            this.queries.delete(change.queryId);
            modifications.push({ type: "QueryRemoved", queryId: change.queryId });
          } else {
            const query = { udfPath: change.udfPath, args: argsObject(change.args), answer: "" };
            this.queries.set(change.queryId, query);
            modifications.push(await this.run(change.queryId, query));
          }
        }
        this.transition({ querySet: message.newVersion }, modifications);
        return;
      }
      case "Mutation": {
        const result = await this.backend.run({ path: message.udfPath, kind: "mutation", args: argsObject(message.args), ...this.caller });
        if (!result.ok) {
          this.send({ type: "MutationResponse", requestId: message.requestId, success: false, result: result.errorMessage, errorData: result.errorData, logLines: result.logLines ?? [] });
          return;
        }
        // The client resolves a mutation at the first transition at or after the response's
        // timestamp, so the transition with the queries' new answers follows the response.
        const modifications = await this.rerun();
        this.send({ type: "MutationResponse", requestId: message.requestId, success: true, result: result.value, ts: encodeTs(nextTs()), logLines: result.logLines ?? [] });
        this.transition({}, modifications);
        return;
      }
      case "Action": {
        const result = await this.backend.run({ path: message.udfPath, kind: "action", args: argsObject(message.args), ...this.caller });
        this.send(
          result.ok
            ? { type: "ActionResponse", requestId: message.requestId, success: true, result: result.value, logLines: result.logLines ?? [] }
            : { type: "ActionResponse", requestId: message.requestId, success: false, result: result.errorMessage, errorData: result.errorData, logLines: result.logLines ?? [] },
        );
        return;
      }
      default:
        return;
    }
  }

  /** Takes the credentials of an Authenticate message: none, an admin key of the deployment, or a user token. */
  private async authenticate(message: Extract<ClientMessage, { type: "Authenticate" }>): Promise<{ ok: true } | { ok: false; error: string }> {
    this.admin = false;
    this.user = null;
    if (message.tokenType === "None") return { ok: true };
    if (message.value === undefined) return { ok: false, error: "The Authenticate message has no token." };
    if (message.tokenType === "Admin") {
      this.admin = await this.backend.authorize(message.value);
      return this.admin ? { ok: true } : { ok: false, error: "The provided admin key was invalid for this deployment." };
    }
    try {
      this.user = await this.backend.verify(message.value);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Who runs this session's functions. */
  private get caller() {
    return { admin: this.admin, identity: this.user };
  }

  /** After a commit elsewhere: re-runs the queries and sends a transition when an answer changed. */
  async refresh(): Promise<void> {
    const modifications = await this.rerun();
    if (modifications.length > 0) this.transition({}, modifications);
  }

  /** Re-runs every subscribed query; the modifications of those whose answer changed. */
  private async rerun(): Promise<QueryModification[]> {
    const modifications: QueryModification[] = [];
    for (const [queryId, query] of this.queries) {
      const previous = query.answer;
      const modification = await this.run(queryId, query);
      if (query.answer !== previous) modifications.push(modification);
    }
    return modifications;
  }

  private async run(queryId: number, query: { udfPath: string; args: unknown; answer: string }): Promise<QueryModification> {
    const result = await this.backend.run({ path: query.udfPath, kind: "query", args: query.args, ...this.caller });
    const modification: QueryModification = result.ok
      ? { type: "QueryUpdated", queryId, value: result.value ?? null, logLines: result.logLines ?? [], journal: null }
      : { type: "QueryFailed", queryId, errorMessage: result.errorMessage, logLines: result.logLines ?? [], errorData: result.errorData ?? null, journal: null };
    // A query that logs on every run is not a change: its answer is its value or error.
    query.answer = JSON.stringify({ ...modification, logLines: [] });
    return modification;
  }
}

/** An upgrade handler speaking the sync protocol for one deployment; other paths are refused. */
export function syncUpgradeHandler(backend: SyncBackend): (request: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  const server = new WebSocketServer({ noServer: true });
  return (request, socket, head) => {
    const version = SYNC_PATH.exec(new URL(request.url ?? "/", "http://127.0.0.1").pathname)?.[1];
    if (version === undefined) {
      socket.destroy();
      return;
    }
    server.handleUpgrade(request, socket, head, (ws) => {
      if (!KNOWN_CLIENT_VERSION.test(decodeURIComponent(version))) {
        // A FatalError stops the client instead of letting it reconnect forever.
        ws.send(JSON.stringify({ type: "FatalError", error: `The sync protocol of client version ${version.slice(0, 40)} is unknown; this deployment speaks the protocol of convex 1.x clients.` }));
        ws.close(1002, "unknown protocol version");
        return;
      }
      const session = new SyncSession(ws, backend);
      // Messages and refreshes are handled one after another, so transitions chain their versions.
      let queue = Promise.resolve();
      const enqueue = (work: () => Promise<void>) => {
        queue = queue.then(work).catch((error: unknown) => {
          log.error("emulator sync message failed", { error });
          ws.send(JSON.stringify({ type: "FatalError", error: "InternalServerError" }));
          ws.close();
        });
      };
      let refreshQueued = false;
      const unsubscribe = backend.subscribe(() => {
        if (refreshQueued) return;
        refreshQueued = true;
        enqueue(() => {
          refreshQueued = false;
          return session.refresh();
        });
      });
      const ping = setInterval(() => ws.send(JSON.stringify({ type: "Ping" })), PING_INTERVAL_MS);
      ws.on("close", () => {
        unsubscribe();
        clearInterval(ping);
      });
      ws.on("message", (data) => {
        enqueue(async () => {
          const parsed = clientMessage.safeParse(JSON.parse(String(data)));
          if (parsed.success) await session.receive(parsed.data);
        });
      });
    });
  };
}
