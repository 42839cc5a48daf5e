/**
 * The version of content with this SHA-256 (hex): a short prefix of it. Asset URLs carry it as
 * `?v=`, so a re-upload under the same name gets a new URL and no cache (browser or CDN, whatever
 * the driver's max-age) can answer it with the old bytes; an identical re-upload keeps its URL.
 */
export const contentVersion = (sha256: string): string => sha256.slice(0, 16);

/** The blob's URL with its version as the `v` query parameter. */
export function versionedAssetUrl(blobUrl: string, version: string): string {
  const url = new URL(blobUrl);
  url.searchParams.set("v", version);
  return url.toString();
}

/** True when `candidate` is `blobUrl`, with or without a query (a version). */
export function isUrlOfBlob(candidate: string, blobUrl: string): boolean {
  return candidate === blobUrl || candidate.startsWith(`${blobUrl}?`);
}
