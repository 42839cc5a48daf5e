import { describe, expect, it } from "vitest";
import { MAX_EVENT_DATA_BYTES, encodeEventData } from "@/lib/realtime/limits";
import { MAX_NOTIFICATION_BYTES, buildErrorNotification, errorChannel, type ErrorNotification } from "@/lib/realtime/payload";

const PROJECT_ID = "3f1c2b9e-0d2a-4c55-9a3e-5b7d2f1e8c11";
const build = (message: string) =>
  buildErrorNotification({ message, projectId: PROJECT_ID, type: "backend-error", source: "backend-dev", timestamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });

/** Size of the payload inside a Pusher POST body, i.e. JSON-encoded twice. */
const wireSize = (payload: ErrorNotification) => Buffer.byteLength(JSON.stringify(encodeEventData(payload)));

const hasLoneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe("buildErrorNotification", () => {
  it("builds the DESIGN.md shape", () => {
    expect(build("✖ TypeError: fetch failed")).toEqual({
      message: "✖ TypeError: fetch failed",
      timestamp: "2026-01-02T03:04:05.000Z",
      projectId: PROJECT_ID,
      type: "backend-error",
      source: "backend-dev",
    });
    expect(errorChannel(PROJECT_ID)).toBe(`private-${PROJECT_ID}-errors`);
  });

  it("strips colours and redacts admin keys, bearer tokens and private keys", () => {
    const message = [
      "\u001b[31m✖\u001b[39m Error: npx convex dev --admin-key project:team-a:app-b|eyJ2MiI6ImFiYyJ9secretpart failed",
      "Authorization: Bearer cbs_live_0123456789abcdef",
      "JWT_PRIVATE_KEY=-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
    ].join("\n");
    const { message: sent } = build(message);
    expect(sent).not.toContain("\u001b");
    for (const secret of ["eyJ2MiI6ImFiYyJ9secretpart", "cbs_live_0123456789abcdef", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"]) {
      expect(sent).not.toContain(secret);
    }
    expect(sent).toContain("REDACTED");
  });

  it("redacts before truncating, so a key at the cut is not half-exposed", () => {
    const key = `-----BEGIN PRIVATE KEY-----\n${"A".repeat(20_000)}\n-----END PRIVATE KEY-----`;
    const { message } = build(`Error: head\n${key}\ntail`);
    expect(message).not.toMatch(/AAAA/);
  });

  it.each([
    ["plain text", "Error: " + "x".repeat(50_000)],
    ["quotes and backslashes (escaping doubles them)", `Error: ${'"\\'.repeat(20_000)}`],
    ["control characters (escaped as \\u00XX)", `Error: ${"\u0001\u0002".repeat(10_000)}`],
    ["line breaks and indentation", `Error: big\n${"    at frame (file.ts:1:1)\n".repeat(2_000)}`],
    ["emoji (surrogate pairs)", `Error: ${"😀".repeat(20_000)}`],
    ["multi-byte text", `Error: ${"é✖".repeat(20_000)}`],
  ])("truncates %s below the limit, keeping head and tail", (_name, message) => {
    const payload = build(message);
    expect(wireSize(payload)).toBeLessThanOrEqual(MAX_NOTIFICATION_BYTES);
    expect(Buffer.byteLength(encodeEventData(payload))).toBeLessThan(MAX_EVENT_DATA_BYTES);
    expect(payload.message).toMatch(/^Error: /);
    expect(payload.message).toMatch(/\n… \[\d+ characters truncated\] …\n/);
    expect(message.trimEnd().endsWith(payload.message.slice(-20))).toBe(true);
    expect(hasLoneSurrogate(payload.message)).toBe(false);
    // Not needlessly short: at least half the budget is used.
    expect(wireSize(payload)).toBeGreaterThan(MAX_NOTIFICATION_BYTES / 2);
  });

  it("leaves a message that fits untouched", () => {
    const message = `Error: ${"y".repeat(7_000)}`;
    expect(build(message).message).toBe(message);
  });
});
