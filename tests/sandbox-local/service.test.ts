import http from "node:http";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { AuthenticationError, FileNotFoundError, FilesystemEventType, Sandbox, SandboxNotFoundError, type FilesystemEvent, type SandboxOpts } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";

// The local sandbox service (packages/sandbox-local) as the real `e2b` SDK sees it: E2B's
// lifecycle API, envd's services, and the sandbox's ports through `getHost`.
let service: SandboxServiceProcess;
let connection: { apiKey: string; apiUrl: string; sandboxUrl: string };
const created: string[] = [];

const create = async (options: SandboxOpts = {}) => {
  const sandbox = await Sandbox.create({ ...connection, timeoutMs: 120_000, ...options });
  created.push(sandbox.sandboxId);
  return sandbox;
};

/** Polls `check` until it holds; sized for a loaded 2-core machine. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await delay(50);
  }
}

/** An HTTP request to the service carrying a sandbox port's Host, as a browser would send it. */
function requestThroughHost(host: string, requestPath: string, headers: Record<string, string> = {}) {
  return http.request({ host: "127.0.0.1", port: service.port, path: requestPath, headers: { host, ...headers } });
}

beforeAll(async () => {
  service = await startSandboxService(path.join(process.env.DATA_DIR!, "sandbox-service"));
  connection = { apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url };
});

afterAll(async () => {
  await Promise.all(created.map((id) => Sandbox.kill(id, connection).catch(() => false)));
  await service?.stop();
});

describe("lifecycle API", () => {
  it("creates with envs and metadata, reports, lists and kills", async () => {
    const sandbox = await create({ envs: { GREETING: "hello" }, metadata: { project: "p1" } });
    expect((await sandbox.commands.run("echo $GREETING; echo $HOME; id -un 2>/dev/null || true")).stdout).toMatch(/^hello\n\/home\/user\n/);
    const info = await sandbox.getInfo();
    expect(info).toMatchObject({ sandboxId: sandbox.sandboxId, metadata: { project: "p1" }, state: "running" });
    expect(info.endAt.getTime()).toBeGreaterThan(Date.now());
    const listed = await Sandbox.list(connection).nextItems();
    expect(listed.map((entry) => entry.sandboxId)).toContain(sandbox.sandboxId);
    await sandbox.setTimeout(600_000);
    expect((await sandbox.getInfo()).endAt.getTime()).toBeGreaterThan(Date.now() + 500_000);
    expect(await Sandbox.kill(sandbox.sandboxId, connection)).toBe(true);
    expect(await Sandbox.kill(sandbox.sandboxId, connection)).toBe(false);
    await expect(Sandbox.connect(sandbox.sandboxId, connection)).rejects.toBeInstanceOf(SandboxNotFoundError);
  });

  it("refuses a wrong API key and a wrong envd access token", async () => {
    await expect(Sandbox.create({ ...connection, apiKey: `e2b_${"0".repeat(40)}` })).rejects.toBeInstanceOf(AuthenticationError);
    const sandbox = await create();
    const answer = await fetch(`${service.url}/health`, { headers: { "E2b-Sandbox-Id": sandbox.sandboxId, "X-Access-Token": "wrong" } });
    expect(answer.status).toBe(401);
    const withToken = await fetch(`${service.url}/health`, {
      headers: { "E2b-Sandbox-Id": sandbox.sandboxId, "X-Access-Token": (sandbox as unknown as { envdAccessToken: string }).envdAccessToken },
    });
    expect(withToken.status).toBe(204);
  });

  it("pauses and resumes: a paused sandbox answers no envd call, and its processes go on after connect", async () => {
    const sandbox = await create();
    const counter = await sandbox.commands.run("while true; do date +%s%N >> ticks; sleep 0.05; done", { background: true, timeoutMs: 0 });
    const ticks = async () => (await sandbox.files.read("ticks")).split("\n").filter(Boolean).length;
    await eventually(async () => (await sandbox.files.exists("ticks")) && (await ticks()) > 0);
    expect(await sandbox.pause()).toBe(true);
    expect((await Sandbox.getInfo(sandbox.sandboxId, connection)).state).toBe("paused");
    expect(await Sandbox.pause(sandbox.sandboxId, connection)).toBe(false);
    await expect(sandbox.files.read("ticks")).rejects.toThrow();
    const resumed = await Sandbox.connect(sandbox.sandboxId, connection);
    const before = await ticks();
    await eventually(async () => (await ticks()) > before);
    expect((await resumed.commands.list()).map((process) => process.pid)).toContain(counter.pid);
  });

  it("pauses a sandbox whose timeout ended when created with onTimeout pause, and connect resumes it", async () => {
    const sandbox = await create({ timeoutMs: 1_000, lifecycle: { onTimeout: "pause" } });
    await sandbox.files.write("kept.txt", "kept");
    await eventually(async () => (await Sandbox.getInfo(sandbox.sandboxId, connection)).state === "paused");
    const resumed = await Sandbox.connect(sandbox.sandboxId, { ...connection, timeoutMs: 120_000 });
    expect(await resumed.files.read("kept.txt")).toBe("kept");
  });

  it("kills a sandbox whose timeout ended by default", async () => {
    const sandbox = await create({ timeoutMs: 1_000 });
    await eventually(async () => !(await Sandbox.list(connection).nextItems()).some((entry) => entry.sandboxId === sandbox.sandboxId));
    await expect(Sandbox.connect(sandbox.sandboxId, connection)).rejects.toBeInstanceOf(SandboxNotFoundError);
  });
});

describe("envd", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await create();
  });

  it("uploads and downloads 10 MB byte for byte, as multipart and as a stream", async () => {
    const bytes = new Uint8Array(10 * 1024 * 1024).map((_, index) => (index * 31 + 7) % 256);
    await sandbox.files.write("/home/user/big.bin", bytes.buffer);
    expect(Buffer.from(await sandbox.files.read("/home/user/big.bin", { format: "bytes" })).equals(Buffer.from(bytes))).toBe(true);
    await sandbox.files.write("/home/user/streamed.bin", new Blob([bytes]).stream());
    const stream = await sandbox.files.read("/home/user/streamed.bin", { format: "stream" });
    expect(Buffer.from(await new Response(stream).arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    expect((await sandbox.commands.run("wc -c < /home/user/streamed.bin")).stdout.trim()).toBe(String(bytes.length));
  });

  it("watches a directory", async () => {
    await sandbox.files.makeDir("/home/user/watched");
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir("/home/user/watched", (event) => void events.push(event), { timeoutMs: 0 });
    await sandbox.files.write("/home/user/watched/new.txt", "x");
    await eventually(async () => events.some((event) => event.name === "new.txt" && event.type === FilesystemEventType.CREATE));
    await sandbox.commands.run("rm /home/user/watched/new.txt");
    await eventually(async () => events.some((event) => event.name === "new.txt" && event.type === FilesystemEventType.REMOVE));
    await handle.stop();
  });

  it("moves, stats and refuses missing paths", async () => {
    await sandbox.files.write("/home/user/from.txt", "moved");
    const moved = await sandbox.files.rename("/home/user/from.txt", "/home/user/to/to.txt");
    expect(moved).toMatchObject({ name: "to.txt", path: "/home/user/to/to.txt", type: "file" });
    expect(await sandbox.files.getInfo("/home/user/to/to.txt")).toMatchObject({ size: 5, type: "file" });
    expect(await sandbox.files.exists("/home/user/from.txt")).toBe(false);
    await expect(sandbox.files.getInfo("/home/user/from.txt")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.read("/home/user/from.txt")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.rename("/home/user/from.txt", "/home/user/x.txt")).rejects.toBeInstanceOf(FileNotFoundError);
  });

  it("answers a read of a file rewritten meanwhile at once, never waiting for bytes that are gone", async () => {
    // A dev server rewriting a file (truncate, then write) while the product reads it: the answer
    // is what was there, whole or cut short. Announcing the size at open made a file cut short
    // leave the SDK waiting for the rest until its request timeout.
    const file = "/home/user/rewritten.bin";
    const size = 4_000_000;
    await sandbox.commands.run(`head -c ${size} /dev/zero > ${file}`);
    const writer = await sandbox.commands.run(`while [ ! -e /home/user/stop-rewriting ]; do head -c ${size} /dev/zero > ${file}; done`, {
      background: true,
      timeoutMs: 0,
    });
    try {
      for (let read = 0; read < 20; read++) {
        const bytes = await sandbox.files.read(file, { format: "bytes", requestTimeoutMs: 30_000 });
        expect(bytes.length).toBeLessThanOrEqual(size);
      }
    } finally {
      await sandbox.files.write("/home/user/stop-rewriting", "");
      await writer.wait();
    }
  });

  it("sends input to a running command", async () => {
    const handle = await sandbox.commands.run("cat", { background: true, stdin: true });
    await sandbox.commands.sendStdin(handle.pid, "typed\n");
    await sandbox.commands.closeStdin(handle.pid);
    expect((await handle.wait()).stdout).toBe("typed\n");
  });
});

describe("ports", () => {
  it("reaches a dev server's HTTP and WebSocket upgrades at getHost(port), and only that sandbox's", async () => {
    const sandbox = await create();
    const other = await create();
    const server = [
      "const http = require('http');",
      "const server = http.createServer((req, res) => res.end('answer from ' + req.url));",
      "server.on('upgrade', (req, socket) => { socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: echo\\r\\nConnection: Upgrade\\r\\n\\r\\n'); socket.pipe(socket); });",
      "server.listen(8081, '127.0.0.1', () => console.log('listening'));",
    ].join("\n");
    await sandbox.files.write("server.js", server);
    const ready = new Promise<void>((resolve) => {
      void sandbox.commands.run("node server.js", {
        background: true,
        timeoutMs: 0,
        onStdout: (data) => {
          if (data.includes("listening")) resolve();
        },
      });
    });
    await ready;

    const host = sandbox.getHost(8081);
    expect(host).toBe(`8081-${sandbox.sandboxId}.localhost:${service.port}`);
    const body = await new Promise<string>((resolve, reject) => {
      requestThroughHost(host, "/hello")
        .on("response", (answer) => {
          let text = "";
          answer.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
        })
        .on("error", reject)
        .end();
    });
    expect(body).toBe("answer from /hello");

    const echoed = await new Promise<string>((resolve, reject) => {
      requestThroughHost(host, "/socket", { connection: "Upgrade", upgrade: "echo" })
        .on("upgrade", (_answer, socket) => {
          socket.once("data", (chunk) => {
            resolve(chunk.toString());
            socket.destroy();
          });
          socket.write("ping");
        })
        .on("error", reject)
        .end();
    });
    expect(echoed).toBe("ping");

    // The other sandbox has its own loopback: nothing listens on its 8081.
    const status = await new Promise<number>((resolve, reject) => {
      requestThroughHost(other.getHost(8081), "/").on("response", (answer) => resolve(answer.statusCode!)).on("error", reject).end();
    });
    expect(status).toBe(502);
    expect((await other.commands.run("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8081/ || true")).stdout).not.toBe("200");
  });
});

describe("envd's Connect protocol", () => {
  it("answers bad calls with Connect errors, not crashes", async () => {
    const sandbox = await create();
    const headers = {
      "E2b-Sandbox-Id": sandbox.sandboxId,
      "X-Access-Token": (sandbox as unknown as { envdAccessToken: string }).envdAccessToken,
      "content-type": "application/json",
    };
    const call = (method: string, body: string) => fetch(`${service.url}/${method}`, { method: "POST", headers, body });

    const badJson = await call("filesystem.Filesystem/Stat", "{not json");
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ code: "invalid_argument" });
    const missing = await call("filesystem.Filesystem/Stat", JSON.stringify({ path: "/home/user/nothing-here" }));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "not_found" });
    const noProcess = await call("process.Process/SendSignal", JSON.stringify({ process: { pid: 999_999 }, signal: "SIGNAL_SIGKILL" }));
    expect(await noProcess.json()).toMatchObject({ code: "not_found" });
    expect((await call("process.Process/NoSuchMethod", "{}")).status).toBe(404);
    // The agent still answers.
    expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
  });
});
