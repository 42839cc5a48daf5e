import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxUid } from "@/packages/sandbox-local/src/wall";
import { ECHO_SERVER, echoOver, eventually, machineAddress, outputOf, SANDBOX_ENV, serviceOnAllInterfaces, wallScratch } from "./wall-fixture";

const scratch = wallScratch("wall-isolation");

/**
 * Climbs from inside sandbox A; every attempt reports its outcome (value or error code) as JSON,
 * so each assertion names the specific failure the wall caused.
 */
const CLIMB = String.raw`
const fs = require("node:fs");
const net = require("node:net");
const { execFileSync } = require("node:child_process");
const [testPid, dataFile, otherHome, port, machine] = process.argv.slice(2);
const results = {};
function attempt(name, action) {
  try { results[name] = { ok: true, value: action() }; } catch (error) { results[name] = { ok: false, code: error.code }; }
}
attempt("environ", () => fs.readFileSync("/proc/" + testPid + "/environ", "utf8"));
attempt("signal", () => process.kill(Number(testPid), "SIGTERM"));
attempt("dataFile", () => fs.readFileSync(dataFile, "utf8"));
attempt("otherRead", () => fs.readFileSync(otherHome + "/secret.txt", "utf8"));
attempt("otherWrite", () => fs.writeFileSync(otherHome + "/secret.txt", "overwritten by A"));
attempt("processes", () => fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map((pid) => {
  try { return fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\0").join(" "); } catch { return "(unreadable)"; }
}));
attempt("ps", () => execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" }));
attempt("readOnlyWrite", () => fs.writeFileSync("/opt/toolchain/added.txt", "x"));
attempt("readOnlyRead", () => fs.readFileSync("/opt/toolchain/tool.txt", "utf8"));
attempt("usrWrite", () => fs.writeFileSync("/usr/added.txt", "x"));
attempt("rootWrite", () => fs.writeFileSync("/added.txt", "x"));
attempt("passwdWrite", () => fs.appendFileSync("/etc/passwd", "evil:x:0:0::/:/bin/sh\n"));
attempt("shadowRead", () => fs.readFileSync("/etc/shadow", "utf8"));
attempt("givenWrite", () => { fs.appendFileSync("/home/user/given.txt", " and changed"); return fs.readFileSync("/home/user/given.txt", "utf8"); });
attempt("linkedWrite", () => fs.appendFileSync("/home/user/linked-tool.txt", "x"));
attempt("wallWrite", () => fs.writeFileSync("/run/sandbox/.wall/etc/hosts", "127.0.0.1 registry.npmjs.org\n"));
attempt("wallRename", () => fs.renameSync("/run/sandbox/.wall", "/run/sandbox/moved"));
attempt("ownWrite", () => { fs.writeFileSync("/home/user/mine.txt", "mine"); return fs.readFileSync("/home/user/mine.txt", "utf8"); });
attempt("tmpWrite", () => { fs.writeFileSync("/tmp/t.txt", "t"); return true; });
results.uid = process.getuid();
results.env = process.env;
function connect(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port), timeout: 20000 });
    socket.on("connect", () => { socket.destroy(); resolve({ ok: true }); });
    socket.on("error", (error) => resolve({ ok: false, code: error.code }));
    socket.on("timeout", () => { socket.destroy(); resolve({ ok: false, code: "TIMEOUT" }); });
  });
}
(async () => {
  results.loopback = await connect("127.0.0.1", port);
  results.machine = await connect(machine, port);
  results.nameServer = await connect("10.255.255.53", 53);
  console.log(JSON.stringify(results));
})();
`;

const servicePort = serviceOnAllInterfaces("the service");

describe("the sandbox wall against code that climbs it", () => {
  it("hides the service's processes, files, other sandboxes and network; keeps read-only mounts read-only", async () => {
    const serverPort = await servicePort;
    process.env.WALL_TEST_CANARY = "canary-of-the-service-env";
    const dataDir = path.join(scratch.base, "DATA_DIR");
    fs.mkdirSync(dataDir);
    const dataFile = path.join(dataDir, "secrets.key");
    fs.writeFileSync(dataFile, "the service's secrets key");
    const toolchain = path.join(scratch.base, "toolchain");
    fs.mkdirSync(toolchain);
    fs.writeFileSync(path.join(toolchain, "tool.txt"), "tool");

    const specB = scratch.spec("iso-b");
    fs.writeFileSync(path.join(specB.home, "secret.txt"), "B's secret");
    const sandboxB = await scratch.start(["node", "-e", ECHO_SERVER], specB);
    await eventually("B's echo", () => echoOver(path.join(specB.runtimeDir, "echo.sock"), "ping"));

    // A value the shell must not interpret: quotes, a command substitution, a newline.
    const env = { ...SANDBOX_ENV, TRICKY: "it's $(touch /home/user/pwned) `touch /home/user/pwned2` \"q\"\nline 2 \\ end" };
    const specA = scratch.spec("iso-a", { env, readOnly: [{ host: toolchain, sandbox: "/opt/toolchain" }] });
    fs.writeFileSync(path.join(specA.home, "climb.js"), CLIMB);
    // A file the service put into home is the sandbox's; a hard link into a shared tree is not.
    fs.writeFileSync(path.join(specA.home, "given.txt"), "given");
    fs.linkSync(path.join(toolchain, "tool.txt"), path.join(specA.home, "linked-tool.txt"));
    const sandboxA = await scratch.start(
      ["node", "/home/user/climb.js", String(process.pid), dataFile, specB.home, String(serverPort), machineAddress()],
      specA,
    );
    const { stdout, stderr, exit } = await outputOf(sandboxA);
    expect(exit, stderr).toEqual({ code: 0, signal: null });
    const results = JSON.parse(stdout);

    // Processes outside are not there: neither readable nor signalable, nor listed.
    expect(results.environ).toEqual({ ok: false, code: "ENOENT" });
    expect(results.signal).toEqual({ ok: false, code: "ESRCH" });
    expect(results.processes.ok).toBe(true);
    // Only the sandbox's own: bwrap as its PID 1, the climber and what it runs (B's echo server is elsewhere).
    expect(results.processes.value.join("\n")).not.toMatch(/vitest|echo\.sock/);
    expect(results.processes.value.length).toBeLessThanOrEqual(4);
    expect(results.ps.ok).toBe(true);
    expect(results.ps.value).not.toMatch(/vitest|echo\.sock/);
    // The service's data and the other sandbox's home do not exist inside; B's file is unchanged.
    expect(results.dataFile).toEqual({ ok: false, code: "ENOENT" });
    expect(results.otherRead).toEqual({ ok: false, code: "ENOENT" });
    expect(results.otherWrite).toEqual({ ok: false, code: "ENOENT" });
    expect(fs.readFileSync(path.join(specB.home, "secret.txt"), "utf8")).toBe("B's secret");
    // Read-only stays read-only; only home and /tmp are writable.
    expect(results.readOnlyRead).toEqual({ ok: true, value: "tool" });
    expect(results.readOnlyWrite).toEqual({ ok: false, code: "EROFS" });
    expect(results.usrWrite).toEqual({ ok: false, code: "EROFS" });
    expect(results.rootWrite).toEqual({ ok: false, code: "EROFS" });
    // Root-owned files refuse the sandbox user before the read-only mount is even asked.
    expect(results.passwdWrite).toEqual({ ok: false, code: "EACCES" });
    expect(results.shadowRead).toEqual({ ok: false, code: "ENOENT" });
    // The wall's own folder in the runtime directory (its /etc files and sockets) cannot be changed or swapped.
    expect(results.wallWrite).toEqual({ ok: false, code: "EROFS" });
    expect(results.wallRename).toEqual({ ok: false, code: "EBUSY" });
    expect(results.ownWrite).toEqual({ ok: true, value: "mine" });
    expect(results.tmpWrite).toEqual({ ok: true, value: true });
    expect(fs.existsSync(path.join(toolchain, "added.txt"))).toBe(false);
    expect(results.givenWrite).toEqual({ ok: true, value: "given and changed" });
    expect(results.linkedWrite).toEqual({ ok: false, code: "EACCES" });
    expect(fs.readFileSync(path.join(toolchain, "tool.txt"), "utf8")).toBe("tool");
    // Not root, and nothing of the service's environment.
    expect(results.uid).toBe(sandboxA.uid);
    expect(sandboxA.uid).toBe(sandboxUid(specA.id));
    expect(sandboxA.uid).toBeGreaterThanOrEqual(1_000_000);
    // Nor B's user: per-uid kernel counts (inotify instances, keyrings) are not shared.
    expect(sandboxA.uid).not.toBe(sandboxB.uid);
    expect(results.env).toEqual(env);
    expect(fs.readdirSync(specA.home).filter((name) => name.startsWith("pwned"))).toEqual([]);
    expect(stdout).not.toContain("canary-of-the-service-env");
    // Its own network namespace: the service's loopback, this machine's address and its name server are unreachable.
    expect(results.loopback).toEqual({ ok: false, code: "ECONNREFUSED" });
    expect(results.machine).toEqual({ ok: false, code: "ENETUNREACH" });
    expect(results.nameServer).toEqual({ ok: false, code: "ENETUNREACH" });

    // B kept answering throughout.
    expect(await echoOver(path.join(specB.runtimeDir, "echo.sock"), "still there")).toBe("still there");
    await sandboxB.kill();
  });
});
