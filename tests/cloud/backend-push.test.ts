import { describe, expect, it } from "vitest";
import { isPushStartLine, pushOutcomeOf } from "@/lib/cloud/backend-push";

// Lines as `npx convex dev` 1.48 prints them (against the emulated deployment), with and without colours.
describe("pushOutcomeOf", () => {
  it("reads a finished push from the CLI's success line, coloured or not", () => {
    expect(pushOutcomeOf("✔ 09:32:51 Convex functions ready! (2.19s)\n")).toBe("pushed");
    expect(pushOutcomeOf("\u001b[32m✔\u001b[39m 09:32:51 Convex functions ready! (2.19s)")).toBe("pushed");
  });

  it("reads a failed push from the CLI's failure mark and from esbuild's error mark", () => {
    expect(pushOutcomeOf("✖ TypeScript typecheck via `tsc` failed.")).toBe("failed");
    expect(pushOutcomeOf("✖ Error: Unable to start push to http://127.0.0.1:33981")).toBe("failed");
    expect(pushOutcomeOf("\u001b[31m✖\u001b[39m Error fetching POST  http://127.0.0.1:33981/api/deploy2/start_push 400 Bad Request: InvalidModules")).toBe("failed");
    expect(pushOutcomeOf('✘ [ERROR] Could not resolve "./nowhere"')).toBe("failed");
  });

  it("ignores other success lines, progress, errors without the mark and the functions' logs", () => {
    for (const line of [
      "✔ No indexes are deleted by this push",
      "- Preparing Convex functions...",
      "Saved EXPO_PUBLIC_CONVEX_SITE_URL to .env.local",
      "convex/bad.ts:2:69 - error TS2322: Type 'string' is not assignable to type 'number'.",
      "Failed to analyze bad.js: Uncaught Error: broken at import",
      "11/24/2026, 9:40:02 AM [CONVEX M(messages:refuse)] Uncaught Error: refused on purpose",
      "11/24/2026, 9:40:02 AM [CONVEX M(messages:send)] [LOG] '✖ not a push'",
    ]) {
      expect(pushOutcomeOf(line)).toBeNull();
    }
  });

  it("tells a push's start line (the spinner printed without a terminal) from the rest", () => {
    expect(isPushStartLine("- Preparing Convex functions...")).toBe(true);
    expect(isPushStartLine("\u001b[2m- Preparing Convex functions...\u001b[22m")).toBe(true);
    expect(isPushStartLine("✔ 09:32:51 Convex functions ready! (2.19s)")).toBe(false);
    expect(isPushStartLine("[CONVEX M(messages:send)] [LOG] '- Preparing Convex functions...'")).toBe(false);
  });
});
