import crypto from "node:crypto";
import { parseDictionary } from "structured-headers";
import { BadRequestError, ConflictError, NotFoundError } from "@/lib/errors";
import type { SqlExecutor } from "@/lib/store";
import { getServedUpdate } from "@/lib/store/updates";
import { loadSigningKey, signPart, type SigningKey } from "./signing";

/**
 * The Expo Updates protocol v1 (docs.expo.dev/technical-specs/expo-updates-1): what an app's
 * `updates.url` answers. The manifest is served as stored at build; directives are made here.
 */

export const PROTOCOL_VERSION = "1";
const PLATFORMS = ["ios", "android"] as const;

/** The request headers of a manifest request, checked. */
export interface UpdateRequest {
  platform: (typeof PLATFORMS)[number];
  runtimeVersion: string;
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
  const expectation = headers.get("expo-expect-signature");
  if (expectation !== null) {
    try {
      parseDictionary(expectation);
    } catch {
      throw new BadRequestError("expo-expect-signature is not a structured field dictionary.", "invalid_signature_request");
    }
  }
  return {
    platform: platform as UpdateRequest["platform"],
    runtimeVersion,
    currentUpdateId: headers.get("expo-current-update-id")?.toLowerCase() ?? null,
    expectSignature: expectation !== null,
  };
}

interface Part {
  name: "manifest" | "extensions" | "directive";
  body: string;
  signature?: string;
}

/** A `multipart/mixed` body (RFC 2046) of JSON parts, each named by its content-disposition. */
function multipartMixed(parts: Part[]): { body: string; boundary: string } {
  const boundary = `expo-updates-${crypto.randomBytes(12).toString("hex")}`;
  const body = parts
    .map((part) => {
      const headers = [`content-disposition: form-data; name="${part.name}"`, "content-type: application/json; charset=utf-8"];
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

function updateResponse(parts: Part[], key: SigningKey | null): Response {
  const signed = key ? parts.map((part) => (part.name === "extensions" ? part : { ...part, signature: signPart(part.body, key) })) : parts;
  const { body, boundary } = multipartMixed(signed);
  return new Response(body, { status: 200, headers: { ...PROTOCOL_HEADERS, "content-type": `multipart/mixed; boundary=${boundary}` } });
}

const directive = (type: "noUpdateAvailable" | "rollBackToEmbedded", parameters?: Record<string, string>): Part => ({
  name: "directive",
  body: JSON.stringify(parameters ? { type, parameters } : { type }),
});

/**
 * Answers a manifest request for a project: the latest released bundle of the (platform,
 * runtime version) as a `manifest` part with `extensions`; `noUpdateAvailable` when nothing was
 * released or the app already runs it; `rollBackToEmbedded` after a rollback to the embedded
 * update. Parts are signed when the app expects a signature (409 if the project has no key).
 */
export async function answerUpdateRequest(db: SqlExecutor, projectId: string, request: UpdateRequest): Promise<Response> {
  const served = await getServedUpdate(db, projectId, request.platform, request.runtimeVersion);
  if (!served) throw new NotFoundError("Project not found.", "project_not_found");
  const key = request.expectSignature ? await loadSigningKey(db, projectId) : null;
  if (request.expectSignature && !key) {
    throw new ConflictError(
      "The app expects signed updates, but code signing is not set up for this project; create its certificate first.",
      "signing_not_configured",
    );
  }
  if (served.kind === "embedded") {
    return updateResponse([directive("rollBackToEmbedded", { commitTime: served.releasedAt.toISOString() })], key);
  }
  if (served.kind === "none" || served.bundle.updateId === request.currentUpdateId) return updateResponse([directive("noUpdateAvailable")], key);
  return updateResponse(
    [
      { name: "manifest", body: served.bundle.manifest },
      // Assets are public blobs: no request headers needed.
      { name: "extensions", body: JSON.stringify({ assetRequestHeaders: {} }) },
    ],
    key,
  );
}
