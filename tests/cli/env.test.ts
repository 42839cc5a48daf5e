import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadServerEnv } from "@/lib/cli/env";
import { reloadConfig } from "@/lib/config";

const dir = fs.mkdtempSync(path.join(process.env.DATA_DIR!, "env-"));

afterAll(() => {
  delete process.env.PUBLIC_BASE_URL;
  reloadConfig();
});

describe("the CLIs' environment", () => {
  it("comes from the .env files next start reads, the process environment winning", () => {
    const dataDir = process.env.DATA_DIR;
    fs.writeFileSync(path.join(dir, ".env"), "PUBLIC_BASE_URL=https://builder.example\nDATA_DIR=/somewhere/else\n");
    fs.writeFileSync(path.join(dir, ".env.development"), "PUBLIC_BASE_URL=https://dev-only.example\n");
    delete process.env.PUBLIC_BASE_URL;
    loadServerEnv(dir);
    const config = reloadConfig();
    // Bundle and blob URLs are built on it, as on the server.
    expect(config.PUBLIC_BASE_URL).toBe("https://builder.example");
    expect(config.DATA_DIR).toBe(dataDir);
  });
});
