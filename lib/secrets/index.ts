import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type Config, getConfig } from "@/lib/config";
import { processSingleton } from "@/lib/singletons";

const PREFIX = "enc:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Thrown when a ciphertext cannot be opened: wrong key, altered value or not our format. */
export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretDecryptionError";
  }
}

export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretsKeyError";
  }
}

export interface SecretBox {
  /** `context` is bound as additional authenticated data: a ciphertext only opens in the same context. */
  encrypt(plaintext: string, context?: string): string;
  decrypt(ciphertext: string, context?: string): string;
}

/** Whether a stored value is a ciphertext of {@link SecretBox.encrypt} (not a value stored before encryption). */
export const isEncryptedSecret = (stored: string): boolean => stored.startsWith(PREFIX);

/**
 * AES-256-GCM with a fresh 96-bit IV: `iv|tag|ciphertext`. `context` is bound as additional
 * authenticated data, so the bytes only open in the same context.
 */
export function sealBytes(key: Buffer, plain: Uint8Array, context = ""): Buffer {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** Opens {@link sealBytes}' output; a wrong key, context or altered byte throws SecretDecryptionError. */
export function openBytes(key: Buffer, sealed: Uint8Array, context = ""): Buffer {
  const raw = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError("The sealed value is truncated.");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SecretDecryptionError("The sealed value cannot be opened: another key or context, or altered bytes.");
  }
}

/** {@link sealBytes} as text: `enc:v1:<base64url(iv|tag|ciphertext)>`. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new SecretsKeyError(`The secrets key must be ${KEY_BYTES} bytes.`);
  return {
    encrypt: (plaintext, context = "") => PREFIX + sealBytes(key, Buffer.from(plaintext, "utf8"), context).toString("base64url"),
    decrypt(ciphertext, context = "") {
      if (!ciphertext.startsWith(PREFIX)) {
        throw new SecretDecryptionError("A stored secret is not in the expected encrypted format.");
      }
      const raw = Buffer.from(ciphertext.slice(PREFIX.length), "base64url");
      if (raw.length < IV_BYTES + TAG_BYTES) {
        throw new SecretDecryptionError("A stored secret is truncated.");
      }
      try {
        return openBytes(key, raw, context).toString("utf8");
      } catch {
        throw new SecretDecryptionError(
          "Cannot decrypt a stored secret: SECRETS_KEY is not the key it was encrypted with, or the value was altered.",
        );
      }
    },
  };
}

/** Parses SECRETS_KEY (base64 or base64url of 32 bytes). */
export function parseSecretsKey(value: string): Buffer {
  const key = Buffer.from(value, "base64");
  if (key.length !== KEY_BYTES) {
    throw new SecretsKeyError(`SECRETS_KEY must be the base64 encoding of ${KEY_BYTES} random bytes.`);
  }
  return key;
}

/**
 * Reads `<dataDir>/secrets.key`, creating it (mode 0600) on first start. The key is written to a
 * temporary file and hard-linked into place, so two processes starting together agree on one
 * complete key.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, "secrets.key");
  if (!fs.existsSync(file)) createKeyFileOnce(file, crypto.randomBytes(KEY_BYTES).toString("base64") + "\n");
  return parseSecretsKey(fs.readFileSync(file, "utf8").trim());
}

/**
 * Creates `file` (mode 0600) holding `contents` unless it exists. It is written to a temporary file
 * and hard-linked into place, so a reader never sees it half written and two processes starting
 * together agree on the first one's contents.
 */
export function createKeyFileOnce(file: string, contents: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
  fs.writeFileSync(temp, contents, { mode: 0o600, flush: true });
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    fs.unlinkSync(temp);
  }
}

/** The installation's secrets key: SECRETS_KEY when set, otherwise the generated key file in DATA_DIR. */
export function getSecretsKey(config: Pick<Config, "SECRETS_KEY" | "DATA_DIR"> = getConfig()): Buffer {
  return config.SECRETS_KEY ? parseSecretsKey(config.SECRETS_KEY) : loadOrCreateKeyFile(config.DATA_DIR);
}

/** A key for one purpose derived from the secrets key, so no other secret must be configured. */
export function deriveKey(label: string, config?: Pick<Config, "SECRETS_KEY" | "DATA_DIR">): Buffer {
  return crypto.createHmac("sha256", getSecretsKey(config)).update(label).digest();
}

/** The process secret box, keyed by {@link getSecretsKey}. */
export function getSecretBox(): SecretBox {
  return processSingleton("secretBox", () => createSecretBox(getSecretsKey()));
}
