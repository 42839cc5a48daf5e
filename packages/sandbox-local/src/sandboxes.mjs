// The sandboxes of this service: each a home directory, a /tmp, a runtime directory and one walled
// agent (src/agent/main.mjs), with E2B's lifecycle: a timeout since creation or the last connect,
// then a pause (auto-pause) or the end; pause freezes every process, connect thaws. A sandbox's
// record (`sandbox.json` beside its home) outlives the service: a restart of the service is a
// reboot of its sandboxes (files kept, processes gone), as `restore` brings them back.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ApiError } from "./errors.mjs";
import { LOOPBACK_RANGE_SOCKET, startWalled } from "./wall/index.ts";

/** The envd version the agent speaks (the SDK gates features on it). */
export const ENVD_VERSION = "0.5.7";
const AGENT_DIR = fileURLToPath(new URL("./agent/", import.meta.url));
const AGENT_MOUNT = "/run/sandbox-agent";
const AGENT_SOCKET = "/run/sandbox/envd.sock";
/** How long a new agent may take to answer; generous for a loaded 2-core machine. */
const AGENT_START_TIMEOUT_MS = 30_000;
const DEFAULT_TIMEOUT_SECONDS = 300;
const SANDBOX_PATH = `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
const RECORD_FILE = "sandbox.json";
const ID_PATTERN = /^i[0-9a-f]{20}$/;

const removeDirectories = (...directories) =>
  Promise.all(directories.map((directory) => fs.rm(directory, { recursive: true, force: true })));

const newSandboxId = () => `i${randomBytes(10).toString("hex")}`;

function waitForReady(walled) {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`the sandbox agent did not start within ${AGENT_START_TIMEOUT_MS} ms`)), AGENT_START_TIMEOUT_MS);
    walled.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("ready\n")) {
        clearTimeout(timer);
        // Keep draining: a full pipe would block the agent on its next write.
        walled.stdout.removeAllListeners("data");
        walled.stdout.resume();
        resolve(undefined);
      }
    });
    walled.exited.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox agent ended before answering (${JSON.stringify(exit)})`));
    });
  });
}

/**
 * @param {{
 *   dataDir: string,
 *   runtimeRoot: string,
 *   templates: ReturnType<typeof import("./templates.mjs").createTemplates>,
 *   limits: { memoryBytes: number, maxProcesses: number },
 *   loopbackRange?: { first: number, last: number },
 * }} options
 *   `runtimeRoot` holds the agents' sockets: a short path, as a unix socket's path may not exceed
 *   107 bytes. `loopbackRange`: ports of this machine's loopback every sandbox reaches at the
 *   same port of its own (the emulated deployments).
 */
export function createSandboxRegistry({ dataDir, runtimeRoot, templates, limits, loopbackRange }) {
  /** @type {Map<string, any>} */
  const sandboxes = new Map();
  const root = path.join(dataDir, "sandboxes");

  const scheduleTimeout = (sandbox, seconds) => {
    clearTimeout(sandbox.timer);
    sandbox.endAt = new Date(Date.now() + seconds * 1000);
    sandbox.timer = setTimeout(() => {
      const expire = sandbox.autoPause ? pause(sandbox.id).catch(() => undefined) : kill(sandbox.id);
      expire.catch(() => undefined);
    }, seconds * 1000);
    sandbox.timer.unref();
  };

  const get = (id) => {
    const sandbox = sandboxes.get(id);
    if (!sandbox) throw new ApiError(404, `sandbox ${id} not found`);
    return sandbox;
  };

  const writeRecord = async (directory, record) => {
    const file = path.join(directory, RECORD_FILE);
    await fs.writeFile(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 });
    await fs.rename(`${file}.tmp`, file);
  };

  /** Starts the agent of a sandbox whose directory holds its home and /tmp, and lists the sandbox. */
  async function launch(record) {
    const { id } = record;
    const directory = path.join(root, id);
    const runtimeDir = path.join(runtimeRoot, id);
    await fs.mkdir(runtimeDir, { recursive: true });
    // The agent, as the sandbox's own user, creates its socket here. Only the sandbox sees this
    // directory writable: on the host its parent (mkdtemp's, 0700) lets no other user in.
    await fs.chmod(runtimeDir, 0o777);
    const env = {
      PATH: `${SANDBOX_PATH}:${path.dirname(process.execPath)}`,
      HOME: "/home/user",
      USER: "user",
      LANG: "C.UTF-8",
      E2B_SANDBOX: "true",
      E2B_SANDBOX_ID: id,
      ...record.envVars,
      SANDBOX_AGENT_SOCKET: AGENT_SOCKET,
      ...(loopbackRange ? { SANDBOX_AGENT_LOOPBACK_PORTS: `${loopbackRange.first}-${loopbackRange.last}`, SANDBOX_AGENT_LOOPBACK_SOCKET: LOOPBACK_RANGE_SOCKET } : {}),
    };
    const walled = await startWalled([process.execPath, `${AGENT_MOUNT}/main.mjs`], {
      id,
      home: path.join(directory, "home"),
      tmp: path.join(directory, "tmp"),
      runtimeDir,
      readOnly: [{ host: AGENT_DIR, sandbox: AGENT_MOUNT }],
      env,
      egress: "registry",
      ...(loopbackRange ? { loopbackRange } : {}),
      limits,
    });
    walled.stderr.resume();
    try {
      await waitForReady(walled);
    } catch (error) {
      await walled.kill();
      await removeDirectories(runtimeDir);
      throw new ApiError(503, `sandbox could not start: ${error.message}`);
    }
    const sandbox = {
      ...record,
      startedAt: new Date(record.startedAt),
      endAt: new Date(),
      state: "running",
      socketPath: path.join(runtimeDir, "envd.sock"),
      directory,
      runtimeDir,
      walled,
      timer: undefined,
    };
    sandboxes.set(id, sandbox);
    walled.exited.then(() => {
      // The agent died (killed, or a limit stopped the sandbox): the sandbox is gone.
      if (sandboxes.get(id) === sandbox) void kill(id);
    });
    scheduleTimeout(sandbox, record.timeout);
    return sandbox;
  }

  async function create({ templateID = "base", envVars = {}, metadata = {}, timeout = DEFAULT_TIMEOUT_SECONDS, autoPause = false }) {
    await templates.check(templateID);
    const id = newSandboxId();
    const directory = path.join(root, id);
    const record = {
      id,
      templateID,
      envVars,
      metadata,
      timeout,
      autoPause: Boolean(autoPause),
      envdAccessToken: randomBytes(24).toString("hex"),
      startedAt: new Date().toISOString(),
    };
    try {
      await fs.mkdir(path.join(directory, "home"), { recursive: true });
      await fs.mkdir(path.join(directory, "tmp"), { recursive: true });
      await templates.fill(templateID, path.join(directory, "home"));
      await writeRecord(directory, record);
      return await launch(record);
    } catch (error) {
      await removeDirectories(directory);
      throw error;
    }
  }

  /** Ends a sandbox's processes; `forget` also deletes its files. */
  async function stop(sandbox, { forget }) {
    sandboxes.delete(sandbox.id);
    clearTimeout(sandbox.timer);
    await sandbox.walled.kill();
    await removeDirectories(sandbox.runtimeDir, ...(forget ? [sandbox.directory] : []));
  }

  const kill = (id) => stop(get(id), { forget: true });

  async function pause(id) {
    const sandbox = get(id);
    if (sandbox.state === "paused") throw new ApiError(409, `sandbox ${id} is already paused`);
    clearTimeout(sandbox.timer);
    await sandbox.walled.freeze();
    sandbox.state = "paused";
  }

  /** E2B's connect: resumes a paused sandbox and restarts its timeout when one is given. */
  async function connect(id, { timeout } = {}) {
    const sandbox = get(id);
    const wasPaused = sandbox.state === "paused";
    if (wasPaused) {
      await sandbox.walled.thaw();
      sandbox.state = "running";
    }
    if (timeout !== undefined || wasPaused) scheduleTimeout(sandbox, timeout ?? DEFAULT_TIMEOUT_SECONDS);
    return { sandbox, resumed: wasPaused };
  }

  /**
   * Brings back the sandboxes an earlier run of the service left on disk, running (a paused one
   * too: its processes ended with that run), each with its full timeout from now. One that cannot
   * start is reported and left on disk.
   */
  async function restore() {
    const entries = await fs.readdir(root).catch(() => []);
    await Promise.all(
      entries
        .filter((id) => ID_PATTERN.test(id))
        .map(async (id) => {
          const text = await fs.readFile(path.join(root, id, RECORD_FILE), "utf8").catch(() => null);
          if (text === null) return removeDirectories(path.join(root, id));
          try {
            await launch(JSON.parse(text));
          } catch (error) {
            process.stderr.write(`sandbox-local: sandbox ${id} could not be brought back: ${error.message}\n`);
          }
        }),
    );
  }

  return {
    create,
    kill,
    pause,
    connect,
    get,
    restore,
    list: () => [...sandboxes.values()],
    setTimeout: (id, seconds) => scheduleTimeout(get(id), seconds),
    /** At the service's end: every sandbox stops, its files stay for the next start. */
    async stopAll() {
      await Promise.all([...sandboxes.values()].map((sandbox) => stop(sandbox, { forget: false }).catch(() => undefined)));
    },
  };
}
