// The sandboxes of this service: each a home directory, a runtime directory and one walled
// agent (src/agent/main.mjs), with E2B's lifecycle: a timeout since creation or the last
// connect, then a pause (auto-pause) or the end; pause freezes every process, connect thaws.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startWalled } from "./wall/index.ts";

/** The envd version the agent speaks (the SDK gates features on it). */
export const ENVD_VERSION = "0.5.7";
const AGENT_DIR = fileURLToPath(new URL("./agent/", import.meta.url));
const AGENT_MOUNT = "/run/sandbox-agent";
const AGENT_SOCKET = "/run/sandbox/envd.sock";
/** How long a new agent may take to answer; generous for a loaded 2-core machine. */
const AGENT_START_TIMEOUT_MS = 30_000;
const DEFAULT_TIMEOUT_SECONDS = 300;
const SANDBOX_PATH = `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** An error the HTTP layer answers with `status` and E2B's `{ code, message }` body. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

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
 * @param {{ dataDir: string, runtimeRoot: string, templates: Record<string, string | null>, limits: { memoryBytes: number, maxProcesses: number } }} options
 *   `templates` maps a template id to the host directory its home starts as a copy of (`null`:
 *   empty). `runtimeRoot` holds the agents' sockets: a short path, as a unix socket's path may
 *   not exceed 107 bytes.
 */
export function createSandboxRegistry({ dataDir, runtimeRoot, templates, limits }) {
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

  async function create({ templateID = "base", envVars = {}, metadata = {}, timeout = DEFAULT_TIMEOUT_SECONDS, autoPause = false }) {
    if (!(templateID in templates)) throw new ApiError(404, `template '${templateID}' not found`);
    const id = newSandboxId();
    const directory = path.join(root, id);
    const home = path.join(directory, "home");
    const runtimeDir = path.join(runtimeRoot, id);
    await fs.mkdir(runtimeDir, { recursive: true });
    // The agent, as the sandbox's own user, creates its socket here. Only the sandbox sees this
    // directory writable: on the host its parent (mkdtemp's, 0700) lets no other user in.
    await fs.chmod(runtimeDir, 0o777);
    await fs.mkdir(directory, { recursive: true });
    if (templates[templateID]) await fs.cp(templates[templateID], home, { recursive: true, verbatimSymlinks: true });
    else await fs.mkdir(home, { recursive: true });
    const env = {
      PATH: `${SANDBOX_PATH}:${path.dirname(process.execPath)}`,
      HOME: "/home/user",
      USER: "user",
      LANG: "C.UTF-8",
      E2B_SANDBOX: "true",
      E2B_SANDBOX_ID: id,
      ...envVars,
      SANDBOX_AGENT_SOCKET: AGENT_SOCKET,
    };
    const walled = await startWalled([process.execPath, `${AGENT_MOUNT}/main.mjs`], {
      id,
      home,
      runtimeDir,
      readOnly: [{ host: AGENT_DIR, sandbox: AGENT_MOUNT }],
      env,
      egress: "registry",
      limits,
    });
    walled.stderr.resume();
    try {
      await waitForReady(walled);
    } catch (error) {
      await walled.kill();
      await removeDirectories(directory, runtimeDir);
      throw new ApiError(503, `sandbox could not start: ${error.message}`);
    }
    const sandbox = {
      id,
      templateID,
      metadata,
      envdAccessToken: randomBytes(24).toString("hex"),
      startedAt: new Date(),
      endAt: new Date(),
      state: "running",
      autoPause: Boolean(autoPause),
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
    scheduleTimeout(sandbox, timeout);
    return sandbox;
  }

  async function kill(id) {
    const sandbox = get(id);
    sandboxes.delete(id);
    clearTimeout(sandbox.timer);
    await sandbox.walled.kill();
    await removeDirectories(sandbox.directory, sandbox.runtimeDir);
  }

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

  return {
    create,
    kill,
    pause,
    connect,
    get,
    list: () => [...sandboxes.values()],
    setTimeout: (id, seconds) => scheduleTimeout(get(id), seconds),
    async closeAll() {
      await Promise.all([...sandboxes.keys()].map((id) => kill(id).catch(() => undefined)));
    },
  };
}
