import crypto from "node:crypto";
import { deriveKey } from "@/lib/secrets";

/**
 * Mirrors are sealed with AES-256-GCM under a key derived from the secrets key, bound to their
 * project: the blob store serves every blob at a public URL, and the app's source (and any key
 * the AI wrote into it) must not be readable there.
 */
const MAGIC = Buffer.from("rmirror1");
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_LABEL = "repository-mirror";

export class MirrorDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MirrorDecryptionError";
  }
}

export function sealMirror(plain: Uint8Array, projectId: string): Buffer {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv("aes-256-gcm", deriveKey(KEY_LABEL), iv);
  cipher.setAAD(Buffer.from(projectId, "utf8"));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), body]);
}

export function openMirror(sealed: Uint8Array, projectId: string): Buffer {
  const raw = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const header = MAGIC.length + IV_BYTES + TAG_BYTES;
  if (raw.length < header || !raw.subarray(0, MAGIC.length).equals(MAGIC)) throw new MirrorDecryptionError("The stored mirror is not in the expected format.");
  const decipher = crypto.createDecipheriv("aes-256-gcm", deriveKey(KEY_LABEL), raw.subarray(MAGIC.length, MAGIC.length + IV_BYTES));
  decipher.setAAD(Buffer.from(projectId, "utf8"));
  decipher.setAuthTag(raw.subarray(MAGIC.length + IV_BYTES, header));
  try {
    return Buffer.concat([decipher.update(raw.subarray(header)), decipher.final()]);
  } catch {
    throw new MirrorDecryptionError("The stored mirror cannot be opened: another secrets key, another project, or altered bytes.");
  }
}
