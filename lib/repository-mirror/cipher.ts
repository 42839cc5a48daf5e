import { deriveKey, openBytes, sealBytes, SecretDecryptionError } from "@/lib/secrets";

/**
 * Mirrors are sealed with AES-256-GCM under a key derived from the secrets key, bound to their
 * project: the blob store serves every blob at a public URL, and the app's source (and any key
 * the AI wrote into it) must not be readable there.
 */
const MAGIC = Buffer.from("rmirror1");
const KEY_LABEL = "repository-mirror";

export class MirrorDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MirrorDecryptionError";
  }
}

export const sealMirror = (plain: Uint8Array, projectId: string): Buffer =>
  Buffer.concat([MAGIC, sealBytes(deriveKey(KEY_LABEL), plain, projectId)]);

export function openMirror(sealed: Uint8Array, projectId: string): Buffer {
  const raw = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (!raw.subarray(0, MAGIC.length).equals(MAGIC)) throw new MirrorDecryptionError("The stored mirror is not in the expected format.");
  try {
    return openBytes(deriveKey(KEY_LABEL), raw.subarray(MAGIC.length), projectId);
  } catch (error) {
    if (!(error instanceof SecretDecryptionError)) throw error;
    throw new MirrorDecryptionError("The stored mirror cannot be opened: another secrets key, another project, or altered bytes.");
  }
}
