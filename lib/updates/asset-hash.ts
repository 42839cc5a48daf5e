import crypto from "node:crypto";

/**
 * An asset's `hash` as the Expo Updates protocol states it: the SHA-256 of its bytes, Base64URL
 * (RFC 4648 §5) without padding. Manifests are written with it (lib/bundles) and the delivery
 * check compares fetched bytes with it, so both sides hash the same way.
 */
export const assetHash = (bytes: Uint8Array): string => crypto.createHash("sha256").update(bytes).digest("base64url");
