import crypto from "node:crypto";
import { parseDictionary, type Item } from "structured-headers";
import { type BlobStore, getBlobStore } from "@/lib/blob";
import { serveBlob } from "@/lib/blob/serve";
import { getConfig } from "@/lib/config";
import { assetHash } from "./asset-hash";
import { PROTOCOL_VERSION, renderUpdate } from "./protocol";
import type { SigningKey } from "./signing";

/** Fetches a URL with request headers, as a phone would. */
export type ClientFetch = (url: string, headers: Record<string, string>) => Promise<Response>;

const ASSET_TIMEOUT_MS = 60_000;

/** What the check reads of a manifest (lib/bundles writes it). */
interface ManifestAssets {
  launchAsset: { url: string; hash: string; contentType: string };
  assets: { url: string; hash: string; contentType: string; key: string }[];
}

/**
 * How the service fetches its own update URLs: a URL of a store that serves its own blobs (one
 * with `open`: the fs driver) is answered by the same handler a phone's request reaches
 * (`/blob/...`), in process, because the service may not reach its own public address; any other
 * URL (Vercel Blob, S3) over HTTP.
 */
export function clientFetch(store: BlobStore = getBlobStore(), publicBaseUrl: string = getConfig().PUBLIC_BASE_URL): ClientFetch {
  const ownBlobs = `${publicBaseUrl.replace(/\/+$/, "")}/blob/`;
  return (url, headers) => {
    if (store.open && url.startsWith(ownBlobs)) {
      const pathname = url.slice(ownBlobs.length).replace(/[?#].*$/s, "").split("/").map(decodeURIComponent).join("/");
      return serveBlob(new Request(url, { headers }), store, pathname);
    }
    return fetch(url, { headers, signal: AbortSignal.timeout(ASSET_TIMEOUT_MS) });
  };
}

export interface DeliveryTarget {
  platform: string;
  runtimeVersion: string;
  /** The manifest text exactly as the update URL will serve it. */
  manifest: string;
  /** The project's key and certificate when code signing is on. */
  signing: { key: SigningKey; certificate: string } | null;
}

const mediaType = (contentType: string | null) => (contentType ?? "").split(";")[0].trim().toLowerCase();

/**
 * Checks a release before it goes live, as a phone of its platform would take it: the manifest
 * response as the update URL renders it (protocol headers, the signature checked against the
 * certificate when signing is on), then the launch asset and every asset by its URL, each answer
 * 200 with the manifest's content type and hash. Answers why it failed, or null when it passed.
 */
export async function checkDelivery(target: DeliveryTarget, fetchAsClient: ClientFetch = clientFetch()): Promise<string | null> {
  const response = renderUpdate(target.manifest, target.signing?.key ?? null, ["application/expo+json"]);
  if (response.headers.get("expo-protocol-version") !== PROTOCOL_VERSION) return "The manifest response lacks expo-protocol-version: 1.";
  const body = await response.text();
  if (target.signing) {
    const failure = signatureFailure(body, response.headers.get("expo-signature"), target.signing.certificate);
    if (failure) return failure;
  }
  let manifest: ManifestAssets;
  try {
    manifest = JSON.parse(body) as ManifestAssets;
  } catch {
    return "The manifest is not JSON.";
  }
  const headers = { "expo-platform": target.platform, "expo-runtime-version": target.runtimeVersion, "expo-protocol-version": PROTOCOL_VERSION };
  const assets = [{ ...manifest.launchAsset, role: "launch asset" }, ...manifest.assets.map((asset) => ({ ...asset, role: `asset ${asset.key}` }))];
  const failures = await Promise.all(assets.map(async (asset) => {
    let answer: Response;
    try {
      answer = await fetchAsClient(asset.url, headers);
    } catch (error) {
      return `The ${asset.role} could not be fetched from ${asset.url}: ${(error as Error).message}`;
    }
    if (answer.status !== 200) {
      await answer.body?.cancel();
      return `The ${asset.role} at ${asset.url} answered ${answer.status}.`;
    }
    if (mediaType(answer.headers.get("content-type")) !== mediaType(asset.contentType)) {
      await answer.body?.cancel();
      return `The ${asset.role} at ${asset.url} is served as ${answer.headers.get("content-type")}, the manifest says ${asset.contentType}.`;
    }
    const hash = assetHash(new Uint8Array(await answer.arrayBuffer()));
    return hash === asset.hash ? null : `The ${asset.role} at ${asset.url} has SHA-256 ${hash}, the manifest says ${asset.hash}.`;
  }));
  return failures.find((failure) => failure !== null) ?? null;
}

/** Verifies `expo-signature` over the manifest bytes with the certificate's key, as expo-updates does. */
function signatureFailure(body: string, header: string | null, certificate: string): string | null {
  if (!header) return "The manifest response carries no expo-signature although code signing is on.";
  const sig = parseDictionary(header).get("sig") as Item | undefined;
  const publicKey = new crypto.X509Certificate(certificate).publicKey;
  const verified = typeof sig?.[0] === "string" && crypto.verify("sha256", Buffer.from(body, "utf8"), publicKey, Buffer.from(sig[0], "base64"));
  return verified ? null : "The manifest's expo-signature does not verify against the project's certificate.";
}
