import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { config, proxy } from "@/proxy";

const action = (headers: Record<string, string>) =>
  proxy(new NextRequest("http://127.0.0.1:3000/signin", { method: "POST", headers: { host: "127.0.0.1:3000", "next-action": "abc123", ...headers }, body: "[]" }));

describe("server actions from another origin (POST /signin)", () => {
  it("are refused with 403 cross_site_request, not Next.js's 500", async () => {
    for (const origin of ["http://evil.example", "null", "http://127.0.0.1:3001"]) {
      const refused = action({ origin });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.code).toBe("cross_site_request");
    }
  });

  it("pass on from the same origin (behind a proxy too) and without an Origin", () => {
    const cases: Record<string, string>[] = [{ origin: "http://127.0.0.1:3000" }, { origin: "https://app.example", "x-forwarded-host": "app.example" }, {}];
    for (const headers of cases) {
      expect(action(headers).headers.get("x-middleware-next")).toBe("1");
    }
  });

  it("is where the proxy runs: server-action requests on every path", () => {
    expect(config.matcher).toContainEqual({ source: "/:path*", has: [{ type: "header", key: "next-action" }] });
  });
});
