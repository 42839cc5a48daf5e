import crypto from "node:crypto";
import { parseDictionary } from "structured-headers";
import { AppError, BadRequestError, ConflictError, NotFoundError } from "@/lib/errors";
import type { SqlExecutor } from "@/lib/store";
import { getStreamServing, type ServedUpdate } from "@/lib/store/updates";
import { DEFAULT_CHANNEL, isChannelName, isInRollout, PLATFORMS, type Platform } from "./streams";
import { loadSigningKey, signPart, type SigningKey } from "./signing";

/**
 * The Expo Updates protocol v1 (docs.expo.dev/technical-specs/expo-updates-1): what an app's
 * `updates.url` answers. The manifest is served as stored at build; directives are made here.
 */

export const PROTOCOL_VERSION = "1";

/** The response structures of the protocol: multipart (manifest or directive), or the manifest alone as JSON. */
export type ResponseStructure = "multipart/mixed" | "application/expo+json" | "application/json";
const RESPONSE_STRUCTURES: ResponseStructure[] = ["multipart/mixed", "application/expo+json", "application/json"];

/** The request headers of a manifest request, checked. */
export interface UpdateRequest {
  platform: Platform;
  runtimeVersion: string;
  /** `expo-channel-name`; {@link DEFAULT_CHANNEL} when absent. */
  channel: string;
  /** `eas-client-id`: the device's stable id, which places it in or out of a staged rollout. */
  clientId: string | null;
  /** The structures the client accepts, most preferred first (proactive negotiation of `accept`). */
  accepted: ResponseStructure[];
  /** The update the app runs now (lower-case: iOS sends upper-case UUIDs), when it sends one. */
  currentUpdateId: string | null;
  /** Whether the app verifies signatures (`expo-expect-signature`). */
  expectSignature: boolean;
}

/**
 * Reads the protocol headers; `platform` and `runtime-version` query parameters stand in for a
 * missing header, as the protocol allows. Anything missing or unknown is a 400 that names it.
 */
export function parseUpdateRequest(request: Request): UpdateRequest {
  const { headers } = request;
  const query = new URL(request.url).searchParams;
  const protocolVersion = headers.get("expo-protocol-version");
  if (protocolVersion !== PROTOCOL_VERSION) {
    throw new BadRequestError(
      protocolVersion === null
        ? "expo-protocol-version is missing; this endpoint speaks Expo Updates protocol 1."
        : `expo-protocol-version ${JSON.stringify(protocolVersion)} is not supported; this endpoint speaks Expo Updates protocol 1.`,
      "unsupported_protocol_version",
    );
  }
  const platform = headers.get("expo-platform") ?? query.get("platform");
  if (!platform) throw new BadRequestError("expo-platform is missing; send ios or android.", "missing_platform");
  if (!(PLATFORMS as readonly string[]).includes(platform)) {
    throw new BadRequestError(`expo-platform ${JSON.stringify(platform)} is not supported; send ios or android.`, "invalid_platform");
  }
  const runtimeVersion = headers.get("expo-runtime-version") ?? query.get("runtime-version");
  if (!runtimeVersion) throw new BadRequestError("expo-runtime-version is missing.", "missing_runtime_version");
  const channel = headers.get("expo-channel-name") ?? DEFAULT_CHANNEL;
  if (!isChannelName(channel)) {
    throw new BadRequestError("expo-channel-name must be 1 to 64 letters, digits, ., _ or -.", "invalid_channel");
  }
  const expectation = headers.get("expo-expect-signature");
  if (expectation !== null) {
    try {
      parseDictionary(expectation);
    } catch {
      throw new BadRequestError("expo-expect-signature is not a structured field dictionary.", "invalid_signature_request");
    }
  }
  return {
    platform: platform as Platform,
    runtimeVersion,
    channel,
    clientId: headers.get("eas-client-id"),
    accepted: acceptedStructures(headers.get("accept")),
    currentUpdateId: headers.get("expo-current-update-id")?.toLowerCase() ?? null,
    expectSignature: expectation !== null,
  };
}

/**
 * The response structures an `accept` header allows, by falling q (RFC 9110 12.5.1); on equal q
 * multipart first, the one structure that carries directives. No header accepts anything.
 */
function acceptedStructures(accept: string | null): ResponseStructure[] {
  if (accept === null) return RESPONSE_STRUCTURES;
  const ranges = accept.split(",").map((entry) => {
    const [type, ...parameters] = entry.split(";").map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith("q="));
    return { type, q: q === undefined ? 1 : Number(q.slice(2)) || 0 };
  });
  const qualityOf = (structure: ResponseStructure) => {
    const [major] = structure.split("/");
    const matches = ranges.filter((range) => range.type === structure || range.type === `${major}/*` || range.type === "*/*");
    // The most specific range decides (RFC 9110 12.5.1).
    matches.sort((a, b) => specificity(b.type) - specificity(a.type));
    return matches[0]?.q ?? 0;
  };
  return RESPONSE_STRUCTURES.map((structure, order) => ({ structure, order, q: qualityOf(structure) }))
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order)
    .map((entry) => entry.structure);
}

const specificity = (range: string) => (range === "*/*" ? 0 : range.endsWith("/*") ? 1 : 2);

/** 406: the client accepts no response structure that can carry what is to be served. */
class NotAcceptableError extends AppError {
  constructor(message: string) {
    super(406, "not_acceptable", message);
  }
}

interface Part {
  name: "manifest" | "extensions" | "directive";
  body: string;
  signature?: string;
}

/** A `multipart/mixed` body (RFC 2046) of JSON parts, each named by an `inline` content-disposition as the protocol requires. */
function multipartMixed(parts: Part[]): { body: string; boundary: string } {
  const boundary = `expo-updates-${crypto.randomBytes(12).toString("hex")}`;
  const body = parts
    .map((part) => {
      const headers = [`content-disposition: inline; name="${part.name}"`, "content-type: application/json; charset=utf-8"];
      if (part.signature) headers.push(`expo-signature: ${part.signature}`);
      return `--${boundary}\r\n${headers.join("\r\n")}\r\n\r\n${part.body}\r\n`;
    })
    .join("");
  return { body: `${body}--${boundary}--\r\n`, boundary };
}

const PROTOCOL_HEADERS = {
  "expo-protocol-version": PROTOCOL_VERSION,
  "expo-sfv-version": "0",
  "cache-control": "private, max-age=0",
};

function updateResponse(parts: Part[], key: SigningKey | null, accepted: ResponseStructure[]): Response {
  const [structure] = accepted;
  if (structure !== "multipart/mixed") return manifestOnlyResponse(parts, key, structure);
  const signed = key ? parts.map((part) => (part.name === "extensions" ? part : { ...part, signature: signPart(part.body, key) })) : parts;
  const { body, boundary } = multipartMixed(signed);
  return new Response(body, { status: 200, headers: { ...PROTOCOL_HEADERS, "content-type": `multipart/mixed; boundary=${boundary}` } });
}

/**
 * The manifest as the whole body (`application/expo+json` or `application/json`), its signature
 * in the `expo-signature` header. Directives need multipart: 406 then, as the protocol says.
 */
function manifestOnlyResponse(parts: Part[], key: SigningKey | null, structure: ResponseStructure | undefined): Response {
  const manifest = parts.find((part) => part.name === "manifest");
  if (!structure) throw new NotAcceptableError(`accept allows none of ${RESPONSE_STRUCTURES.join(", ")}, the structures of Expo Updates protocol 1.`);
  if (!manifest) {
    throw new NotAcceptableError(`What this update URL serves now is a directive, which only a multipart/mixed response can carry; accept multipart/mixed.`);
  }
  const headers: Record<string, string> = { ...PROTOCOL_HEADERS, "content-type": `${structure}; charset=utf-8` };
  if (key) headers["expo-signature"] = signPart(manifest.body, key);
  return new Response(manifest.body, { status: 200, headers });
}

const directive = (type: "noUpdateAvailable" | "rollBackToEmbedded", parameters?: Record<string, string>): Part => ({
  name: "directive",
  body: JSON.stringify(parameters ? { type, parameters } : { type }),
});

/**
 * What a device gets from a stream: the newest release, unless it is a staged rollout that leaves
 * the device out (by its `eas-client-id`); then the newest full release, or nothing.
 */
function servedTo(serving: Awaited<ReturnType<typeof getStreamServing>>, clientId: string | null): ServedUpdate {
  if (!serving?.latest) return { kind: "none" };
  const { latest, stable } = serving;
  if (latest.release.rolloutPercent >= 100 || isInRollout(latest.release.commitSha, clientId, latest.release.rolloutPercent)) return latest.served;
  return stable?.served ?? { kind: "none" };
}

/**
 * Answers a manifest request for a project: what its channel's (platform, runtime version) serves
 * to this device as a `manifest` part with `extensions`; `noUpdateAvailable` when nothing was
 * released (or the channel is unknown) or the app already runs it; `rollBackToEmbedded` after a
 * rollback to the embedded update. Parts are signed when the app expects a signature (409 if the
 * project has no key). A client that accepts only JSON gets the manifest alone, or 406.
 */
export async function answerUpdateRequest(db: SqlExecutor, projectId: string, request: UpdateRequest): Promise<Response> {
  const serving = await getStreamServing(db, projectId, { channel: request.channel, platform: request.platform, runtimeVersion: request.runtimeVersion });
  if (!serving) throw new NotFoundError("Project not found.", "project_not_found");
  const served = servedTo(serving, request.clientId);
  const key = request.expectSignature ? await loadSigningKey(db, projectId) : null;
  if (request.expectSignature && !key) {
    throw new ConflictError(
      "The app expects signed updates, but code signing is not set up for this project; create its certificate first.",
      "signing_not_configured",
    );
  }
  if (served.kind === "embedded") {
    return updateResponse([directive("rollBackToEmbedded", { commitTime: served.releasedAt.toISOString() })], key, request.accepted);
  }
  // A JSON-only client compares update ids itself: it gets the manifest, never a directive.
  const upToDate = served.kind === "bundle" && served.bundle.updateId === request.currentUpdateId && request.accepted[0] === "multipart/mixed";
  if (served.kind === "none" || upToDate) return updateResponse([directive("noUpdateAvailable")], key, request.accepted);
  return renderUpdate(served.bundle.manifest, key, request.accepted);
}

/** The response that serves a stored manifest, as the update URL sends it (the delivery check reads it too). */
export function renderUpdate(manifest: string, key: SigningKey | null, accepted: ResponseStructure[] = RESPONSE_STRUCTURES): Response {
  return updateResponse(manifestParts(manifest), key, accepted);
}

/** The parts of an update: the manifest as stored, and extensions. */
const manifestParts = (manifest: string): Part[] => [
  { name: "manifest", body: manifest },
  // Assets are public blobs: no request headers needed.
  { name: "extensions", body: JSON.stringify({ assetRequestHeaders: {} }) },
];
