import { expect } from "vitest";
import { z } from "zod";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
// Base64URL (RFC 4648 §5) of 32 bytes without padding.
const SHA256_BASE64URL = /^[A-Za-z0-9_-]{43}$/;

const asset = z.strictObject({
  hash: z.string().regex(SHA256_BASE64URL).optional(),
  key: z.string().min(1),
  contentType: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/),
  fileExtension: z.string().optional(),
  url: z.url(),
});

/**
 * The Expo Updates protocol v1 manifest body (docs.expo.dev/technical-specs/expo-updates-1) with
 * the iOS client's extra demands (NewUpdate.swift): a UUID id, and `hash`, `key`, `url` and a
 * `.`-prefixed `fileExtension` on every non-launch asset.
 */
const manifestSchema = z.strictObject({
  id: z.string().regex(UUID, "id must be a UUID"),
  createdAt: z.iso.datetime(),
  runtimeVersion: z.string().min(1),
  launchAsset: asset.extend({ url: z.url() }),
  assets: z.array(
    asset.extend({
      hash: z.string().regex(SHA256_BASE64URL),
      fileExtension: z.string().regex(/^\.\w+$/, "fileExtension must start with ."),
    }),
  ),
  metadata: z.record(z.string(), z.string()),
  extra: z.record(z.string(), z.unknown()),
});

export type ValidManifest = z.output<typeof manifestSchema>;

/** Fails the test unless `value` is a conforming manifest; returns it typed. */
export function expectExpoUpdatesV1Manifest(value: unknown): ValidManifest {
  const parsed = manifestSchema.safeParse(value);
  expect(parsed.error?.issues ?? []).toEqual([]);
  const manifest = parsed.data!;
  // The protocol says clients ignore the launch asset's extension and servers SHOULD omit it.
  expect(manifest.launchAsset.fileExtension).toBeUndefined();
  expect(manifest.launchAsset.contentType).toBe("application/javascript");
  expect(new Set(manifest.assets.map((entry) => entry.key)).size).toBe(manifest.assets.length);
  return manifest;
}
