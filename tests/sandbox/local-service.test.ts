import fs from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reloadConfig } from "@/lib/config";
import { ensureAppDevServer } from "@/lib/dev-servers";
import { createProject } from "@/lib/projects";
import { APP_DIR, CommandExitError, fetchPreview, getSandboxProvider, type Sandbox } from "@/lib/sandbox";
import { ensureSandboxServiceKey, sandboxServiceDataDir } from "@/lib/sandbox/local-service";
import { getStore, type Sql } from "@/lib/store";
import type { Project } from "@/lib/store/projects";
import { startSandboxService, type SandboxServiceProcess } from "../helpers/sandbox-service";
import { createTestUser } from "../helpers/users";

// The product in its default local mode (SANDBOX_DRIVER=local): the e2b driver on the real `e2b`
// SDK, talking to the local sandbox service this file starts as `npm start` would (its key file
// in DATA_DIR, the prepared app toolchain as a template, the emulated deployments' ports
// forwarded), with the real wall around every sandbox.

const dataDir = process.env.DATA_DIR!;
const serviceDir = sandboxServiceDataDir(dataDir);
const toolchainDir = process.env.APP_TOOLCHAIN_DIR!;
const [firstDeploymentPort, lastDeploymentPort] = process.env.EMULATOR_PORT_RANGE!.split("-").map(Number);
/** Generous: a loaded 2-core machine, sandboxes linking the toolchain's node_modules. */
const SLOW_MS = 240_000;

/** The dev-server stand-in, inline: a walled sandbox does not see this machine's tests/ folder. */
async function inlineStandIn(): Promise<string> {
  const source = await fs.readFile(path.resolve("tests", "helpers", "dev-server-stand-in.mjs"), "utf8");
  return `node --input-type=module -e '${source.replaceAll("'", `'\\''`)}' stand-in app`;
}

/** A loopback listener on the host that greets whoever connects with `greeting`. */
async function greeter(port: number, greeting: string): Promise<net.Server | null> {
  const server = net.createServer((socket) => socket.end(greeting));
  return new Promise((resolve) => {
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

/** Node code run in the sandbox: prints what 127.0.0.1:<port> sends, or `refused`. */
const connectScript = (port: number) =>
  `node -e 'const s = require("net").connect(${port}, "127.0.0.1"); let d = ""; s.on("data", (c) => (d += c)); s.on("end", () => console.log(d || "refused")); s.on("error", () => console.log("refused")); setTimeout(() => { console.log(d || "refused"); process.exit(0); }, 20000).unref();'`;

let db: Sql;
let service: SandboxServiceProcess;
let project: Project;
let sandbox: Sandbox;
const listeners: net.Server[] = [];

beforeAll(async () => {
  // The key file `npm start` writes once; the service reads it, the server's driver too.
  const keyFile = ensureSandboxServiceKey(dataDir);
  const apiKey = (await fs.readFile(keyFile, "utf8")).trim();
  service = await startSandboxService(serviceDir, { apiKey, toolchainDir, loopbackPorts: process.env.EMULATOR_PORT_RANGE });
  process.env.SANDBOX_DRIVER = "local";
  process.env.SANDBOX_SERVICE_PORT = String(service.port);
  process.env.APP_DEV_COMMAND = await inlineStandIn();
  reloadConfig();
  db = await getStore();
  const owner = await createTestUser(db, "Owner");
  project = await createProject(db, owner.user.id, "Walled app");
  sandbox = await getSandboxProvider().connect(project.sandboxId!);
}, SLOW_MS);

afterAll(async () => {
  for (const listener of listeners) listener.close();
  if (project?.sandboxId) await getSandboxProvider().kill(project.sandboxId).catch(() => false);
  await service?.stop();
});

describe("SANDBOX_DRIVER=local: the product on the local sandbox service", { timeout: SLOW_MS }, () => {
  it("creates the project's sandbox on the service and serves its preview at <port>-<id>.localhost through the service", async () => {
    expect(sandbox.driver).toBe("local");
    expect(project.previewUrl).toBe(`http://8081-${project.sandboxId}.localhost:${service.port}`);
    const answer = await fetchPreview(project.previewUrl!);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("<title>app</title>");
    // The app repository as the product seeds it, with the template's lock file recorded.
    expect((await sandbox.commands.run("git log --format=%s", { cwd: APP_DIR })).stdout).toContain("Create app from the app template");
    expect(await sandbox.files.exists(`${APP_DIR}/package-lock.json`)).toBe(true);
  });

  it("links the toolchain's node_modules into the app: shared files, root's and read-only to the app", async () => {
    const [toolchain] = (await fs.readdir(toolchainDir)).filter((name) => name.startsWith("app-"));
    const relative = path.join("node_modules", "expo", "package.json");
    const shared = await fs.stat(path.join(toolchainDir, toolchain, relative));
    const linked = await fs.stat(path.join(serviceDir, "sandboxes", project.sandboxId!, "home", "app", relative));
    expect(linked.ino).toBe(shared.ino);
    expect(linked.uid).toBe(0);

    const write = await sandbox.commands.run(`echo tampered >> ${APP_DIR}/${relative}`).catch((error: unknown) => error);
    expect(write).toBeInstanceOf(CommandExitError);
    expect(await fs.readFile(path.join(toolchainDir, toolchain, relative), "utf8")).not.toContain("tampered");
    // Node resolves the app's dependencies from the links.
    const version = await sandbox.commands.run(`node -p 'require("expo/package.json").version'`, { cwd: APP_DIR });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("keeps the server's data, key files and processes out of the app's reach", async () => {
    const secrets = [path.join(dataDir, "sandbox-service.key"), path.join(dataDir, "secrets.key")];
    const probe = await sandbox.commands.run(
      [
        ...secrets.map((file) => `cat ${file} >/dev/null 2>&1 && echo "read ${file}"`),
        `ls ${dataDir} >/dev/null 2>&1 && echo "listed DATA_DIR"`,
        `cat /proc/${process.pid}/environ >/dev/null 2>&1 && echo "read the server's environ"`,
        // Every process the app can see is the sandbox's: none of this machine's (no vitest, no
        // service). Bracketed patterns, so this command's own text does not match them.
        `cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -o -e 'vites[t]' -e 'sandbox-local/src/mai[n]' | head -1`,
        "true",
      ].join("; "),
    );
    expect(probe.stdout).toBe("");
    for (const file of secrets) {
      const content = await fs.readFile(file, "utf8").catch(() => null);
      if (content) expect(probe.stdout + probe.stderr).not.toContain(content.trim());
    }
  });

  it("reaches a deployment port of EMULATOR_PORT_RANGE at 127.0.0.1, and no other port of this machine", async () => {
    let deployment: net.Server | null = null;
    let deploymentPort = firstDeploymentPort;
    for (; deploymentPort <= lastDeploymentPort && !deployment; deploymentPort++) deployment = await greeter(deploymentPort, "deployment");
    deploymentPort--;
    const outside = await greeter(0, "outside");
    listeners.push(deployment!, outside!);
    const outsidePort = (outside!.address() as net.AddressInfo).port;
    expect(outsidePort < firstDeploymentPort || outsidePort > lastDeploymentPort).toBe(true);

    expect((await sandbox.commands.run(connectScript(deploymentPort))).stdout.trim()).toBe("deployment");
    expect((await sandbox.commands.run(connectScript(outsidePort))).stdout.trim()).toBe("refused");
    // Nor the service's own API, nor the product's.
    expect((await sandbox.commands.run(connectScript(service.port))).stdout.trim()).toBe("refused");
  });

  it("a restart of the service keeps the sandbox's files; the product starts its dev server again", async () => {
    await sandbox.files.write("/home/user/kept.txt", "home survives");
    await sandbox.commands.run("echo tmp survives > /tmp/kept.txt");
    const { port, apiKey } = service;
    await service.stop();
    service = await startSandboxService(serviceDir, { port, apiKey, toolchainDir, loopbackPorts: process.env.EMULATOR_PORT_RANGE });

    const back = await getSandboxProvider().connect(project.sandboxId!);
    expect(await back.files.read("/home/user/kept.txt")).toBe("home survives");
    expect((await back.commands.run("cat /tmp/kept.txt")).stdout).toBe("tmp survives\n");
    expect((await back.commands.run("git status --porcelain", { cwd: APP_DIR })).stdout).toBe("");
    // Processes ended with the old run, as after a reboot: the preview comes back when asked for.
    expect(await ensureAppDevServer(back)).toBe(project.previewUrl);
    expect((await fetchPreview(project.previewUrl!)).status).toBe(200);
  });
});
