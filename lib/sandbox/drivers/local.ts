import crypto from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { NotConfiguredError } from "@/lib/errors";
import { removeStaleGitLock, seedAppFromTemplate } from "../app-repository";
import { InvalidArgumentError, SandboxNotFoundError } from "../errors";
import { APP_DIR, type CreateSandboxOptions, type Sandbox, type SandboxProvider } from "../port";
import { getCommandHost, removeTree } from "./local-command-host";
import { LocalCommands, newCommandOwner } from "./local-commands";
import { LocalFiles } from "./local-files";
import { SandboxPaths } from "./local-paths";

/** Gives a seeded app its dependencies (the app toolchain: `node_modules` and the lock file). */
export interface DependencyInstaller {
  linkInto(templateRoot: string, appDir: string): Promise<void>;
}

export interface LocalSandboxOptions {
  /** Directory holding one directory per sandbox (`DATA_DIR/sandboxes`). Created when missing. */
  root: string;
  /** Directory of the templates `create({ template })` copies. @default `<cwd>/templates` */
  templatesDir?: string;
  /** Installs a template's dependencies into a new sandbox's app; none when absent. */
  dependencies?: DependencyInstaller;
  /** Variables every command sees (the shared npm cache), below the command's own. */
  commandEnv?: Record<string, string>;
  /** Ports `reservePort` hands out. @default 24000–24999, below the kernel's ephemeral range */
  portRange?: { first: number; last: number };
  /** Host name `getHost` answers with; servers listen on every loopback address. @default "localhost" */
  previewHost?: string;
}

const DRIVER_NAME = "local-unwalled";
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Inside a sandbox's directory: `home/` is `/home/user`; the metadata file sits beside it. */
const HOME_DIR = "home";
const METADATA_FILE = "sandbox.json";

interface SandboxMetadata {
  sandboxId: string;
  createdAt: string;
  /** Host ports handed out by `reservePort`, by service name. */
  ports: Record<string, number>;
}

/** The sandboxes' directory, really and as commands see it (see {@link commandRootFor}). */
interface SandboxRoots {
  real: string;
  command: string;
}

/** What a path may hold to be pasted unquoted into shell text. */
const SHELL_SAFE_PATH = /^[\w/.+@%:,=-]+$/;

/**
 * Commands get `/home/user` replaced by a host path pasted unquoted into their text, so a root
 * with spaces or shell characters is reached through a symlink in the temp directory instead.
 */
async function commandRootFor(realRoot: string): Promise<string> {
  if (SHELL_SAFE_PATH.test(realRoot)) return realRoot;
  const digest = crypto.createHash("sha256").update(realRoot).digest("hex").slice(0, 16);
  const alias = path.join(os.tmpdir(), `sandboxes-${digest}`);
  await fs.symlink(realRoot, alias).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  if (!SHELL_SAFE_PATH.test(alias) || (await fs.realpath(alias)) !== realRoot) {
    throw new NotConfiguredError(`The local sandbox directory ${JSON.stringify(realRoot)} contains characters a shell would split; set DATA_DIR to a path without them.`);
  }
  return alias;
}

const DEFAULT_PORT_RANGE = { first: 24_000, last: 24_999 };

/** Whether nothing listens on `port` right now (on any interface: Metro binds them all). */
function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** Ports already handed to the sandboxes under `root`, running or not. */
async function reservedPorts(root: string): Promise<Set<number>> {
  const ports = new Set<number>();
  for (const entry of await fs.readdir(root).catch(() => [] as string[])) {
    const text = await fs.readFile(path.join(root, entry, METADATA_FILE), "utf8").catch(() => null);
    if (!text) continue;
    for (const port of Object.values((JSON.parse(text) as SandboxMetadata).ports)) ports.add(port);
  }
  return ports;
}

/** A port of the range that no sandbox holds and nothing listens on, tried from a random start. */
async function findFreePort(root: string, range: { first: number; last: number }): Promise<number> {
  const taken = await reservedPorts(root);
  const size = range.last - range.first + 1;
  const start = crypto.randomInt(size);
  for (let offset = 0; offset < size; offset++) {
    const port = range.first + ((start + offset) % size);
    if (!taken.has(port) && (await isPortFree(port))) return port;
  }
  throw new NotConfiguredError(`No free port left in LOCAL_PORT_RANGE ${range.first}-${range.last}; widen it.`, "no_free_port");
}

/**
 * Port reservations under one sandbox root, one at a time in this process: each sees the ports the
 * one before wrote, so two sandboxes reserving at once never get the same port.
 */
const portReservations = new Map<string, Promise<unknown>>();
function reserveInTurn<T>(root: string, reserve: () => Promise<T>): Promise<T> {
  const reserved = (portReservations.get(root) ?? Promise.resolve()).then(reserve);
  portReservations.set(root, reserved.catch(() => undefined));
  return reserved;
}

/**
 * A sandbox that is a directory on this machine (`<root>/<id>/home` plays `/home/user`) with
 * commands run as child processes. Not an isolation boundary: commands run as the service's user.
 */
class LocalSandbox implements Sandbox {
  readonly driver = DRIVER_NAME;
  readonly files: LocalFiles;
  readonly commands: LocalCommands;
  private readonly dir: string;

  readonly paths: SandboxPaths;

  constructor(
    readonly sandboxId: string,
    private readonly roots: SandboxRoots,
    private readonly options: LocalSandboxOptions,
    owner: string,
  ) {
    this.dir = path.join(roots.real, sandboxId);
    this.paths = new SandboxPaths(path.join(this.dir, HOME_DIR), path.join(roots.command, sandboxId, HOME_DIR));
    this.files = new LocalFiles(this.paths);
    this.commands = new LocalCommands(sandboxId, this.paths, owner, options.commandEnv);
  }

  getHost(port: number): string {
    return `${this.options.previewHost ?? "localhost"}:${port}`;
  }

  reservePort(name: string): Promise<number> {
    // In turn, also with this sandbox's own calls: two concurrent first calls get one port.
    return reserveInTurn(this.roots.real, async () => {
      const metadata = await this.readMetadata();
      if (metadata.ports[name]) return metadata.ports[name];
      const port = await findFreePort(this.roots.real, this.options.portRange ?? DEFAULT_PORT_RANGE);
      await this.writeMetadata({ ...metadata, ports: { ...metadata.ports, [name]: port } });
      return port;
    });
  }

  async restart(): Promise<void> {
    await this.commands.killAll();
    await removeStaleGitLock(this);
  }

  async readMetadata(): Promise<SandboxMetadata> {
    return JSON.parse(await fs.readFile(path.join(this.dir, METADATA_FILE), "utf8")) as SandboxMetadata;
  }

  async writeMetadata(metadata: SandboxMetadata): Promise<void> {
    const target = path.join(this.dir, METADATA_FILE);
    const temporary = `${target}.${crypto.randomUUID()}.tmp`;
    await fs.writeFile(temporary, JSON.stringify(metadata, null, 2));
    await fs.rename(temporary, target);
  }
}

/** The unwalled local sandbox driver (`SANDBOX_DRIVER=local-unwalled`): no isolation from the server. */
export function createLocalSandboxProvider(options: LocalSandboxOptions): SandboxProvider {
  // Started now, before the server grows: commands are spawned by it, never by this process.
  getCommandHost();
  const owner = newCommandOwner();
  const attached = new Map<string, Promise<LocalSandbox>>();
  let roots: Promise<SandboxRoots> | undefined;
  const getRoots = () =>
    (roots ??= (async () => {
      await fs.mkdir(options.root, { recursive: true });
      const real = await fs.realpath(options.root);
      return { real, command: await commandRootFor(real) };
    })());

  const sandboxDir = async (sandboxId: string) => {
    if (typeof sandboxId !== "string" || !ID_PATTERN.test(sandboxId)) {
      throw new InvalidArgumentError(`Invalid sandbox id ${JSON.stringify(sandboxId)}.`);
    }
    return path.join((await getRoots()).real, sandboxId);
  };

  const attach = async (sandboxId: string): Promise<LocalSandbox> => {
    const dir = await sandboxDir(sandboxId);
    if (!(await fs.stat(path.join(dir, METADATA_FILE)).catch(() => null))) throw new SandboxNotFoundError(sandboxId);
    const sandbox = new LocalSandbox(sandboxId, await getRoots(), options, owner);
    // First attach in this server process: what an earlier (or killed) server process left
    // running can be neither listed nor stopped, so it goes (as after a sandbox reboot); what
    // another live instance runs here is its own, and stays.
    await sandbox.commands.killOrphans();
    return sandbox;
  };

  const connect = async (sandboxId: string): Promise<LocalSandbox> => {
    let pending = attached.get(sandboxId);
    if (pending && !(await fs.stat(path.join(await sandboxDir(sandboxId), METADATA_FILE)).catch(() => null))) {
      // Its directory was removed behind the service's back: the sandbox is gone, as on E2B after a kill.
      attached.delete(sandboxId);
      await (await pending.catch(() => null))?.commands.killAll().catch(() => undefined);
      throw new SandboxNotFoundError(sandboxId);
    }
    if (!pending) {
      pending = attach(sandboxId);
      attached.set(sandboxId, pending);
      pending.catch(() => attached.delete(sandboxId));
    }
    return pending;
  };

  const kill = async (sandboxId: string): Promise<boolean> => {
    const sandbox = await connect(sandboxId).catch((error: unknown) => {
      if (error instanceof SandboxNotFoundError) return null;
      throw error;
    });
    if (!sandbox) return false;
    await sandbox.commands.killAll();
    attached.delete(sandboxId);
    await removeTree(await sandboxDir(sandboxId));
    return true;
  };

  const create = async ({ template }: CreateSandboxOptions = {}): Promise<Sandbox> => {
    const sandboxId = `local-${crypto.randomBytes(10).toString("hex")}`;
    await fs.mkdir(path.join(await sandboxDir(sandboxId), HOME_DIR), { recursive: true });
    const sandbox = new LocalSandbox(sandboxId, await getRoots(), options, owner);
    await sandbox.writeMetadata({ sandboxId, createdAt: new Date().toISOString(), ports: {} });
    attached.set(sandboxId, Promise.resolve(sandbox));
    if (template) {
      try {
        const dependencies = options.dependencies;
        await seedAppFromTemplate(sandbox, template, {
          templatesDir: options.templatesDir,
          installDependencies: dependencies && ((templateRoot) => dependencies.linkInto(templateRoot, sandbox.paths.toHost(APP_DIR))),
        });
      } catch (error) {
        await kill(sandboxId);
        throw error;
      }
    }
    return sandbox;
  };

  return { driver: DRIVER_NAME, create, connect, kill };
}
