import crypto from "node:crypto";
import { promisify } from "node:util";
import {
  convertCertificateToCertificatePEM,
  convertKeyPairPEMToKeyPair,
  generateSelfSignedCodeSigningCertificate,
} from "@expo/code-signing-certificates";
import { serializeDictionary } from "structured-headers";
import { NotFoundError } from "@/lib/errors";
import { getSecretBox, type SecretBox } from "@/lib/secrets";
import { processSingleton } from "@/lib/singletons";
import type { SqlExecutor } from "@/lib/store";
import { getSigningKey, insertSigningKey } from "@/lib/store/updates";

/** The only algorithm of Expo Updates code signing (`codeSigningMetadata.alg`). */
export const SIGNING_ALGORITHM = "rsa-v1_5-sha256";
/** `codeSigningMetadata.keyid`: Expo's default, so app.json needs only the certificate. */
export const SIGNING_KEY_ID = "main";
const CERTIFICATE_YEARS = 10;

const generateKeyPair = promisify(crypto.generateKeyPair);
// The ciphertext only opens for the project it was made for.
const privateKeyContext = (projectId: string) => `update_signing_keys.private_key:${projectId}`;

/** A project's key, ready to sign; the private key never leaves the process. */
export interface SigningKey {
  keyId: string;
  privateKey: crypto.KeyObject;
}

/**
 * The project's code signing certificate (PEM), creating its key on first call (`created`): an
 * RSA-2048 key (node:crypto) and a self-signed code signing certificate made by Expo's own
 * library, which gives it the extensions expo-updates checks. The private key is stored encrypted.
 */
export async function ensureSigningCertificate(
  db: SqlExecutor,
  projectId: string,
  box: SecretBox = getSecretBox(),
): Promise<{ certificate: string; created: boolean }> {
  const existing = await getSigningKey(db, projectId);
  if (existing) return { certificate: existing.certificate, created: false };
  const { privateKey, publicKey } = await generateKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const now = new Date();
  const certificate = generateSelfSignedCodeSigningCertificate({
    keyPair: convertKeyPairPEMToKeyPair({ privateKeyPEM: privateKey, publicKeyPEM: publicKey }),
    validityNotBefore: now,
    validityNotAfter: new Date(Date.UTC(now.getUTCFullYear() + CERTIFICATE_YEARS, now.getUTCMonth(), now.getUTCDate())),
    commonName: `Updates of project ${projectId}`,
  });
  const encryptedPrivateKey = box.encrypt(privateKey, privateKeyContext(projectId));
  // A concurrent first call may have stored its key first; both answer the stored one.
  const stored = await insertSigningKey(db, projectId, {
    keyId: SIGNING_KEY_ID,
    encryptedPrivateKey,
    certificate: convertCertificateToCertificatePEM(certificate),
  });
  return { certificate: stored.certificate, created: stored.encryptedPrivateKey === encryptedPrivateKey };
}

/** The project's certificate (PEM); 404 `signing_not_configured` before {@link ensureSigningCertificate}. */
export async function getSigningCertificate(db: SqlExecutor, projectId: string): Promise<string> {
  const stored = await getSigningKey(db, projectId);
  if (!stored) throw new NotFoundError("Code signing is not set up for this project; a POST to its certificate URL creates it.", "signing_not_configured");
  return stored.certificate;
}

/**
 * The project's signing key, or null when it has none. Decrypting and parsing the key costs more
 * than signing with it, so parsed keys are kept per stored ciphertext (a new key is a new entry).
 */
export async function loadSigningKey(db: SqlExecutor, projectId: string, box: SecretBox = getSecretBox()): Promise<SigningKey | null> {
  const stored = await getSigningKey(db, projectId);
  if (!stored) return null;
  const parsed = processSingleton("updateSigningKeys", () => new Map<string, crypto.KeyObject>());
  let privateKey = parsed.get(stored.encryptedPrivateKey);
  if (!privateKey) {
    privateKey = crypto.createPrivateKey(box.decrypt(stored.encryptedPrivateKey, privateKeyContext(projectId)));
    parsed.set(stored.encryptedPrivateKey, privateKey);
  }
  return { keyId: stored.keyId, privateKey };
}

// RSASSA-PKCS1-v1_5 is deterministic: a body signed once has the same signature on every
// request, so the served manifest is signed once per key, not once per request.
const SIGNATURES_PER_KEY = 256;
const signatures = new WeakMap<crypto.KeyObject, Map<string, string>>();

/** The `expo-signature` value of a part: `sig="<base64>", keyid="…", alg="rsa-v1_5-sha256"` (SFV dictionary). */
export function signPart(body: string, key: SigningKey): string {
  const bytes = Buffer.from(body, "utf8");
  const digest = crypto.createHash("sha256").update(bytes).digest("base64");
  let known = signatures.get(key.privateKey);
  if (!known) signatures.set(key.privateKey, (known = new Map()));
  let sig = known.get(digest);
  if (!sig) {
    sig = crypto.sign("sha256", bytes, key.privateKey).toString("base64");
    if (known.size >= SIGNATURES_PER_KEY) known.clear();
    known.set(digest, sig);
  }
  return serializeDictionary({ sig, keyid: key.keyId, alg: SIGNING_ALGORITHM });
}
