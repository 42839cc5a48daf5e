// A Connect-RPC server for the JSON codec, the only codec the `e2b` SDK's envd clients use
// (`useBinaryFormat: false`). Hand-written because the SDK bundles envd's service descriptors
// without exporting them, and generating our own would mean copying envd's .proto files; the
// JSON wire format is small: unary calls are plain JSON bodies, streams are 5-byte-enveloped
// JSON messages ending in an end-of-stream envelope (https://connectrpc.com/docs/protocol).

const END_STREAM_FLAG = 0x02;
const ENVELOPE_HEADER_BYTES = 5;
/** Larger requests are refused: envd's RPCs carry paths and small inputs, files go through /files. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Connect error codes to the HTTP status a unary error answers with. */
const HTTP_STATUS = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  unauthenticated: 401,
};

/** An error a handler throws to answer with a Connect error code. */
export class ConnectError extends Error {
  /** @param {keyof typeof HTTP_STATUS} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = "ConnectError";
    this.code = code;
  }
}

/** Maps a Node filesystem error to the Connect code envd answers with. */
export function fsErrorToConnect(error, path) {
  switch (error?.code) {
    case "ENOENT":
      return new ConnectError("not_found", `path not found: ${path}`);
    case "EEXIST":
      return new ConnectError("already_exists", `path already exists: ${path}`);
    case "EACCES":
    case "EPERM":
      return new ConnectError("permission_denied", `permission denied: ${path}`);
    case "ENOTDIR":
    case "EISDIR":
      return new ConnectError("invalid_argument", `${error.code === "ENOTDIR" ? "not a directory" : "is a directory"}: ${path}`);
    default:
      return new ConnectError("internal", `${error?.message ?? error}`);
  }
}

const toConnectError = (error) => (error instanceof ConnectError ? error : new ConnectError("internal", String(error?.message ?? error)));

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_MESSAGE_BYTES + ENVELOPE_HEADER_BYTES) throw new ConnectError("resource_exhausted", "message too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function parseJson(bytes) {
  try {
    return bytes.length === 0 ? {} : JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new ConnectError("invalid_argument", "request is not valid JSON");
  }
}

/** Yields the JSON messages of an enveloped request stream as they arrive. */
async function* readEnvelopes(req) {
  let buffered = Buffer.alloc(0);
  for await (const chunk of req) {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= ENVELOPE_HEADER_BYTES) {
      const flags = buffered[0];
      const length = buffered.readUInt32BE(1);
      if (length > MAX_MESSAGE_BYTES) throw new ConnectError("resource_exhausted", "message too large");
      if (buffered.length < ENVELOPE_HEADER_BYTES + length) break;
      const payload = buffered.subarray(ENVELOPE_HEADER_BYTES, ENVELOPE_HEADER_BYTES + length);
      buffered = buffered.subarray(ENVELOPE_HEADER_BYTES + length);
      if (flags & 0x01) throw new ConnectError("unimplemented", "compressed messages are not supported");
      if (flags & END_STREAM_FLAG) return;
      yield parseJson(payload);
    }
  }
}

function envelope(flags, message) {
  const payload = Buffer.from(JSON.stringify(message));
  const header = Buffer.alloc(ENVELOPE_HEADER_BYTES);
  header[0] = flags;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** The call's deadline from `Connect-Timeout-Ms`; `0` when it has none. */
export const timeoutMsOf = (req) => {
  const value = Number(req.headers["connect-timeout-ms"] ?? 0);
  return Number.isFinite(value) && value > 0 ? value : 0;
};

/**
 * The stream a server-streaming handler writes to. `closed` resolves when the client went away
 * (disconnect) or the stream ended; handlers stop their work for this stream then.
 */
class ServerStream {
  constructor(res) {
    this.res = res;
    this.ended = false;
    this.closed = new Promise((resolve) => res.on("close", () => resolve(undefined)));
  }

  send(message) {
    if (this.ended || this.res.destroyed) return;
    this.res.write(envelope(0, message));
  }

  end(error) {
    if (this.ended) return;
    this.ended = true;
    if (this.res.destroyed) return;
    const connectError = error ? toConnectError(error) : undefined;
    this.res.end(envelope(END_STREAM_FLAG, connectError ? { error: { code: connectError.code, message: connectError.message } } : {}));
  }
}

/**
 * Serves one Connect request. `methods` maps `/package.Service/Method` to
 * `{ kind: "unary" | "server" | "client", handler }`: unary handlers take the request message and
 * return the answer; server-streaming ones take (message, stream, req) and end the stream;
 * client-streaming ones take (an async iterable of messages, req) and return the answer.
 * @returns {Promise<boolean>} `false` when the path is no method of `methods`.
 */
export async function serveConnect(req, res, methods) {
  const method = methods[new URL(req.url, "http://agent").pathname];
  if (!method) return false;
  if (req.method !== "POST") {
    res.writeHead(405, { "content-type": "application/json" }).end(JSON.stringify({ code: "unimplemented", message: "POST only" }));
    return true;
  }
  if (method.kind === "unary") {
    try {
      const answer = await method.handler(parseJson(await readBody(req)), req);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer ?? {}));
    } catch (error) {
      const connectError = toConnectError(error);
      res
        .writeHead(HTTP_STATUS[connectError.code] ?? 500, { "content-type": "application/json" })
        .end(JSON.stringify({ code: connectError.code, message: connectError.message }));
    }
    return true;
  }
  res.writeHead(200, { "content-type": "application/connect+json" });
  res.flushHeaders();
  const stream = new ServerStream(res);
  try {
    if (method.kind === "client") {
      stream.send((await method.handler(readEnvelopes(req), req)) ?? {});
      stream.end();
    } else {
      // The request is one message and then the end of the body: read it whole (breaking out
      // of the request's iterator early would destroy the socket the answer streams on).
      const body = await readBody(req);
      const length = body.length >= ENVELOPE_HEADER_BYTES ? body.readUInt32BE(1) : 0;
      const message = parseJson(body.subarray(ENVELOPE_HEADER_BYTES, ENVELOPE_HEADER_BYTES + length));
      await method.handler(message, stream, req);
    }
  } catch (error) {
    stream.end(error);
  }
  return true;
}
