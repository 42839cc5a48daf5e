import { describe, expect, it } from "vitest";
import { getSystemPrompt, isBackendConnected } from "@/lib/prompts";
import { BACKEND_SECTIONS } from "@/lib/prompts/backend";
import { BASE_PROMPT } from "@/lib/prompts/base";

const headings = ["Function syntax", "Schema definition", "Validators", "Client hooks", "Auth patterns", "File storage", "Scheduling", "Best practices"];

describe("system prompt selection", () => {
  it("decides connection from the backend state kind only", () => {
    expect(isBackendConnected({ backendProject: null })).toBe(false);
    expect(isBackendConnected({ backendProject: { kind: "connecting" } })).toBe(false);
    expect(isBackendConnected({ backendProject: { kind: "failed", errorMessage: "x" } })).toBe(false);
    expect(
      isBackendConnected({
        backendProject: { kind: "connected", projectSlug: "p", teamSlug: "t", deploymentUrl: "u", deploymentName: "d" },
      }),
    ).toBe(true);
  });

  it("includes every backend guideline section exactly when connected", () => {
    const connected = getSystemPrompt(true);
    const plain = getSystemPrompt(false);
    expect(plain).toBe(BASE_PROMPT);
    expect(connected.startsWith(BASE_PROMPT)).toBe(true);
    for (const heading of headings) {
      expect(connected).toContain(`## ${heading}`);
      expect(plain).not.toContain(`## ${heading}`);
    }
    for (const section of Object.values(BACKEND_SECTIONS)) expect(connected).toContain(section);
  });
});
