import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidArgumentError, PathOutsideSandboxError } from "@/lib/sandbox";
import { SandboxPaths } from "@/lib/sandbox/drivers/local-paths";

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-paths-")));
const home = path.join(base, "home");
const outside = path.join(base, "outside");
fs.mkdirSync(path.join(home, "app"), { recursive: true });
fs.mkdirSync(outside);
fs.symlinkSync(outside, path.join(home, "out"));
fs.symlinkSync(path.join(home, "app"), path.join(home, "inner-link"));
const paths = new SandboxPaths(home);

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("sandbox paths of the local driver", () => {
  it("maps absolute and relative sandbox paths into the home directory", () => {
    expect(paths.toHost("/home/user/app/x.ts")).toBe(path.join(home, "app", "x.ts"));
    expect(paths.toHost("app/x.ts")).toBe(path.join(home, "app", "x.ts"));
    expect(paths.toHost("/home/user/app/../app/./x.ts")).toBe(path.join(home, "app", "x.ts"));
    expect(paths.toHost("/home/user")).toBe(home);
    expect(paths.toSandbox(path.join(home, "app", "x.ts"))).toBe("/home/user/app/x.ts");
    expect(paths.toSandbox(home)).toBe("/home/user");
  });

  it("refuses lexical escapes, other absolute paths, host paths and NUL", () => {
    for (const escape of ["..", "../user2", "/home/user/../../etc", "/etc/passwd", "/home/userx", path.join(home, "app"), "a\0b"]) {
      expect(() => paths.toHost(escape), escape).toThrow(PathOutsideSandboxError);
    }
    expect(() => paths.toHost("")).toThrow(InvalidArgumentError);
  });

  it("refuses symlinks leading outside, allows symlinks that stay inside", async () => {
    await expect(paths.resolve("/home/user/out/file.txt")).rejects.toBeInstanceOf(PathOutsideSandboxError);
    await expect(paths.resolve("/home/user/out")).rejects.toBeInstanceOf(PathOutsideSandboxError);
    await expect(paths.resolve("/home/user/out", { followLast: false })).resolves.toBe(path.join(home, "out"));
    await expect(paths.resolve("/home/user/inner-link/new/file.txt")).resolves.toBe(path.join(home, "app", "new", "file.txt"));
  });

  it("rewrites /home/user in command text as a whole path segment only", () => {
    expect(paths.toHostText("cat /home/user/app/a && ls /home/user; echo /home/username /home/user.bak")).toBe(
      `cat ${home}/app/a && ls ${home}; echo /home/username /home/user.bak`,
    );
    expect(paths.toSandboxText(`error in ${home}/app/index.tsx`)).toBe("error in /home/user/app/index.tsx");
  });
});
