import path from "node:path";
import type { Sandbox as E2BSandbox, SandboxOnTimeout } from "e2b";
import { NotConfiguredError } from "@/lib/errors";
import { registerSecret } from "@/lib/log";
import { DEFAULT_TEMPLATES_DIR, removeStaleGitLock, seedAppFromTemplate } from "../app-repository";
import { APP_DIR, type CreateSandboxOptions, type Sandbox, type SandboxDriverName, type SandboxProvider } from "../port";
import { E2BCommands } from "./e2b-commands";
import { callE2B } from "./e2b-errors";
import { E2BFiles } from "./e2b-files";

export interface E2BSandboxOptions {
  /** E2B API key (`E2B_API_KEY`). Required. */
  apiKey: string | undefined;
  /** E2B template (machine image) to boot; the app template is copied on top. @default E2B's `base` */
  e2bTemplate?: string;
  /**
   * Lifetime of a sandbox since its creation or last `connect`, in milliseconds. E2B caps it
   * (1 h Hobby, 24 h Pro). @default 3_600_000
   */
  timeoutMs?: number;
  /**
   * What happens when the lifetime ends. `pause` keeps files and processes until the next
   * `connect`; `kill` loses the sandbox. @default "pause"
   */
  onTimeout?: SandboxOnTimeout;
  /** Directory of the templates `create({ template })` copies. @default `<cwd>/templates` */
  templatesDir?: string;
  /**
   * Where the SDK's lifecycle API calls and envd traffic go instead of E2B's cloud: the local
   * sandbox service (packages/sandbox-local) serves both on one address. @default E2B's cloud
   */
  apiUrl?: string;
  /** @see apiUrl @default E2B's cloud */
  sandboxUrl?: string;
  /** What the sandboxes report as their driver. @default "e2b" */
  driver?: Extract<SandboxDriverName, "e2b" | "local">;
  /**
   * Where an app template's dependencies come from: its sandbox boots the E2B template holding
   * them (the local service's template of the prepared app toolchain), and the app's first commit
   * records their lock file. @default none: the app gets no dependencies
   */
  toolchain?: ToolchainTemplates;
}

/** Prepared dependencies of app templates, as templates of the sandbox provider. */
export interface ToolchainTemplates {
  /** The provider's template holding the dependencies of the app template at `templateRoot`. */
  templateName(templateRoot: string): Promise<string>;
  /** The lock file describing them. */
  appLockfile(templateRoot: string): Promise<Uint8Array>;
}

const DEFAULT_SANDBOX_TIMEOUT_MS = 60 * 60 * 1000;

/** A sandbox of the E2B driver: the SDK's sandbox behind the port. */
class E2BSandboxAdapter implements Sandbox {
  readonly sandboxId: string;
  readonly files: E2BFiles;
  readonly commands: E2BCommands;

  constructor(
    private readonly sdk: E2BSandbox,
    readonly driver: SandboxDriverName,
  ) {
    this.sandboxId = sdk.sandboxId;
    this.files = new E2BFiles(sdk);
    this.commands = new E2BCommands(sdk);
  }

  getHost(port: number): string {
    return this.sdk.getHost(port);
  }

  /** Every E2B sandbox has its own network, so the conventional port is always free. */
  async reservePort(_name: string, preferred: number): Promise<number> {
    return preferred;
  }

  async restart(): Promise<void> {
    await this.commands.killAll();
    await removeStaleGitLock(this);
  }
}

/**
 * The E2B sandbox driver (`SANDBOX_DRIVER=e2b`, and `local` on the local sandbox service). The SDK
 * is imported on first use only.
 */
export function createE2BSandboxProvider(options: E2BSandboxOptions): SandboxProvider {
  const { apiUrl, sandboxUrl, toolchain } = options;
  const driver = options.driver ?? "e2b";
  const apiKey = options.apiKey;
  if (!apiKey) throw new NotConfiguredError("SANDBOX_DRIVER=e2b needs E2B_API_KEY.", "sandbox_not_configured");
  registerSecret(apiKey);
  const connection = { apiKey, ...(apiUrl ? { apiUrl } : {}), ...(sandboxUrl ? { sandboxUrl } : {}) };
  const timeoutMs = options.timeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS;
  let lib: Promise<typeof import("e2b")> | undefined;
  const loadLib = () => (lib ??= import("e2b"));

  const connect = async (sandboxId: string): Promise<Sandbox> => {
    const { Sandbox: Sdk } = await loadLib();
    return new E2BSandboxAdapter(await callE2B(() => Sdk.connect(sandboxId, { ...connection, timeoutMs }), { sandboxId }), driver);
  };

  const kill = async (sandboxId: string): Promise<boolean> => {
    const { Sandbox: Sdk } = await loadLib();
    return callE2B(() => Sdk.kill(sandboxId, connection), { sandboxId });
  };

  const create = async ({ template }: CreateSandboxOptions = {}): Promise<Sandbox> => {
    const { Sandbox: Sdk } = await loadLib();
    const templateRoot = template && path.join(/*turbopackIgnore: true*/ options.templatesDir ?? DEFAULT_TEMPLATES_DIR, template);
    const e2bTemplate = templateRoot && toolchain ? await toolchain.templateName(templateRoot) : options.e2bTemplate;
    const sdk = await callE2B(() => Sdk.create({ ...connection, template: e2bTemplate, timeoutMs, lifecycle: { onTimeout: options.onTimeout ?? "pause" } }));
    const sandbox = new E2BSandboxAdapter(sdk, driver);
    if (template) {
      try {
        await seedAppFromTemplate(sandbox, template, {
          templatesDir: options.templatesDir,
          installDependencies:
            toolchain && (async (root) => void (await sandbox.files.write(`${APP_DIR}/package-lock.json`, await toolchain.appLockfile(root)))),
        });
      } catch (error) {
        await kill(sandbox.sandboxId).catch(() => false);
        throw error;
      }
    }
    return sandbox;
  };

  return { driver, create, connect, kill };
}
