import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createSecretBox,
  loadOrCreateKeyFile,
  openBytes,
  parseSecretsKey,
  sealBytes,
  SecretDecryptionError,
  SecretsKeyError,
} from "@/lib/secrets";

describe("secrets", () => {
  const box = createSecretBox(crypto.randomBytes(32));

  it("round-trips values, with a fresh IV every time", () => {
    const secret = "project:team:app|0123456789abcdef";
    const first = box.encrypt(secret);
    const second = box.encrypt(secret);
    expect(first).not.toContain(secret);
    expect(first).not.toBe(second);
    expect(box.decrypt(first)).toBe(secret);
    expect(box.decrypt(box.encrypt(""))).toBe("");
    expect(box.decrypt(box.encrypt("ünïcødé ✓"))).toBe("ünïcødé ✓");
  });

  it("seals bytes that open only with the same key and context, and refuses altered or truncated ones", () => {
    const key = crypto.randomBytes(32);
    const plain = crypto.randomBytes(1000);
    const sealed = sealBytes(key, plain, "project-a");
    expect(sealed.includes(plain.subarray(0, 32))).toBe(false);
    expect(openBytes(key, sealed, "project-a").equals(plain)).toBe(true);
    expect(() => openBytes(key, sealed, "project-b")).toThrow(SecretDecryptionError);
    expect(() => openBytes(crypto.randomBytes(32), sealed, "project-a")).toThrow(SecretDecryptionError);
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] ^= 1;
    expect(() => openBytes(key, altered, "project-a")).toThrow(SecretDecryptionError);
    expect(() => openBytes(key, sealed.subarray(0, 20), "project-a")).toThrow(SecretDecryptionError);
  });

  it("detects tampering with any byte", () => {
    const ciphertext = box.encrypt("admin key");
    const raw = Buffer.from(ciphertext.slice("enc:v1:".length), "base64url");
    for (const index of [0, 12, 20, raw.length - 1]) {
      const altered = Buffer.from(raw);
      altered[index] ^= 0x01;
      expect(() => box.decrypt("enc:v1:" + altered.toString("base64url"))).toThrow(SecretDecryptionError);
    }
    expect(() => box.decrypt("enc:v1:AAAA")).toThrow(SecretDecryptionError);
    expect(() => box.decrypt("plain text")).toThrow(SecretDecryptionError);
  });

  it("refuses a wrong key with a clear error instead of garbage", () => {
    const other = createSecretBox(crypto.randomBytes(32));
    expect(() => other.decrypt(box.encrypt("admin key"))).toThrow(/SECRETS_KEY is not the key/);
  });

  it("binds a ciphertext to its context", () => {
    const ciphertext = box.encrypt("token", "row-a");
    expect(box.decrypt(ciphertext, "row-a")).toBe("token");
    expect(() => box.decrypt(ciphertext, "row-b")).toThrow(SecretDecryptionError);
  });

  it("validates SECRETS_KEY", () => {
    expect(parseSecretsKey(crypto.randomBytes(32).toString("base64"))).toHaveLength(32);
    expect(() => parseSecretsKey("c2hvcnQ=")).toThrow(SecretsKeyError);
  });

  it("generates a 0600 key file once and reuses it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cbs-key-"));
    const first = loadOrCreateKeyFile(dir);
    const second = loadOrCreateKeyFile(dir);
    expect(first.equals(second)).toBe(true);
    expect(fs.statSync(path.join(dir, "secrets.key")).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(["secrets.key"]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
