import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect } from "vitest";
import { startWalled, wallSupport, type WalledProcess, type WallExit, type WallSpec } from "@/packages/sandbox-local/src/wall";

/** The complete environment the tests give a sandbox. */
export const SANDBOX_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/home/user", LANG: "C.UTF-8" };

/** Waits sized for a loaded 2-core machine. */
export const GENEROUS_MS = 60_000;

/**
 * A scratch folder for this file's sandboxes, removed (with every sandbox still running) after the
 * file. CI builds walls: a machine that cannot fails the file with the reason.
 */
export function wallScratch(name: string) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`)));
  const running = new Set<WalledProcess>();
  beforeAll(async () => expect(await wallSupport()).toEqual({ ok: true }));
  afterAll(async () => {
    await Promise.all([...running].map((sandbox) => sandbox.kill()));
    fs.rmSync(base, { recursive: true, force: true });
  });
  return {
    base,
    /** A sandbox's spec with its own home and runtime directory under the scratch folder. */
    spec(id: string, overrides: Partial<WallSpec> = {}): WallSpec {
      const home = path.join(base, id, "home");
      const runtimeDir = path.join(base, id, "run");
      fs.mkdirSync(home, { recursive: true });
      fs.mkdirSync(runtimeDir, { recursive: true });
      return {
        id: `${id}-${process.pid}`,
        home,
        runtimeDir,
        env: SANDBOX_ENV,
        egress: "none",
        limits: { memoryBytes: 512 * 1024 ** 2, maxProcesses: 128 },
        ...overrides,
      };
    },
    async start(argv: string[], spec: WallSpec): Promise<WalledProcess> {
      const sandbox = await startWalled(argv, spec);
      running.add(sandbox);
      void sandbox.exited.then(() => running.delete(sandbox));
      return sandbox;
    },
  };
}

/** Everything a sandbox wrote, and how it ended. */
export async function outputOf(sandbox: WalledProcess): Promise<{ stdout: string; stderr: string; exit: WallExit }> {
  const collect = (stream: NodeJS.ReadableStream) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    return new Promise<string>((resolve) => stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))));
  };
  const [stdout, stderr, exit] = await Promise.all([collect(sandbox.stdout), collect(sandbox.stderr), sandbox.exited]);
  return { stdout, stderr, exit };
}

/** One line through a unix socket and its echo back. */
export function echoOver(socketPath: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath, () => socket.write(`${line}\n`));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (data: string) => {
      answer += data;
      if (answer.includes("\n")) {
        socket.destroy();
        resolve(answer.trim());
      }
    });
    socket.on("error", reject);
  });
}

/** A Node program for inside the sandbox that echoes every line on /run/sandbox/echo.sock. */
export const ECHO_SERVER = `require("node:net").createServer((s) => s.pipe(s)).listen("/run/sandbox/echo.sock", () => console.log("listening"))`;

/** Polls until check() holds (no fixed sleeps for ordering: a loaded machine decides the pace). */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + GENEROUS_MS;
  for (;;) {
    const value = await Promise.resolve(check()).catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** This machine's first non-loopback IPv4 address (the sandbox must not reach it). */
export function machineAddress(): string {
  const address = Object.values(os.networkInterfaces())
    .flatMap((infos) => infos ?? [])
    .find((info) => info.family === "IPv4" && !info.internal)?.address;
  if (!address) throw new Error("this machine has no non-loopback IPv4 address");
  return address;
}

/**
 * "The service": an HTTP server on every interface of this machine (as the service and its peers
 * may listen), closed after the file. Resolves with its port once it answers from outside on
 * loopback and on the machine's address, so a sandbox failing to reach it is the wall's doing.
 */
export function serviceOnAllInterfaces(body: string): Promise<number> {
  const server = http.createServer((_request, response) => response.end(body));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve)).then(async () => {
    const port = (server.address() as net.AddressInfo).port;
    for (const host of ["127.0.0.1", machineAddress()]) {
      expect(await (await fetch(`http://${host}:${port}/`)).text()).toBe(body);
    }
    return port;
  });
}
