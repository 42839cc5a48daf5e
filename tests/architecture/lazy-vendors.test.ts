import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

/** Vendor SDKs of drivers the default setup does not choose. */
const OTHER_DRIVERS_SDKS = /^(pg|@redis\/client|pusher|@vercel\/blob|@aws-sdk\/.*|e2b)$/;

const ROOT = path.resolve(import.meta.dirname, "../..");
const dataDir = await mkdtemp(path.join(os.tmpdir(), "lazy-vendors-"));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

it("the default setup loads no other driver's vendor SDK; choosing a driver loads its own", async () => {
  // A process of its own: this one has loaded whatever other tests imported.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "tests/helpers/loaded-packages.ts"), dataDir],
    { cwd: ROOT, timeout: 120_000 },
  );
  // The report is the last line; a log line may come before it.
  const report = stdout.trim().split("\n").at(-1) ?? "";
  const { defaultSetup, redisChosen } = JSON.parse(report) as { defaultSetup: string[]; redisChosen: string[] };
  expect(defaultSetup.filter((name) => OTHER_DRIVERS_SDKS.test(name))).toEqual([]);
  // The chosen drivers' own packages are seen, so an absence above is not a blind probe.
  expect(defaultSetup).toContain("@electric-sql/pglite");
  expect(redisChosen).toContain("@redis/client");
});
