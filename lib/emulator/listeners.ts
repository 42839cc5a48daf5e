import { log } from "@/lib/log";
import type { SqlExecutor } from "@/lib/store";
import { EmulatorError } from "./http";
import { listenOnLoopback, type LoopbackServer, type UpgradeHandler } from "./node-http";
import { listDeploymentsWithPort, nextPortCursor, setDeploymentPort, type EmulatorDeployment } from "./store";

/** What answers the requests of one deployment's listener. */
export interface DeploymentService {
  handle(request: Request): Promise<Response>;
  upgrade: UpgradeHandler;
}

/** URL of a deployment whose listener has this port: a host root, as hosted deployments are. */
export function deploymentUrlForPort(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** How often a deployment whose port another process holds tries to listen on it again. */
const LISTEN_RETRY_MS = 2_000;

/**
 * One loopback HTTP listener per emulated deployment, so clients that resolve `/api/...` against
 * the deployment URL reach it. Each deployment gets a fixed port of its own from a configured
 * range (EMULATOR_PORT_RANGE: outside the sandboxes' ports and the kernel's ephemeral ones, which
 * any process may be handed), stored with it; later starts reopen that port, so its URL in
 * `.env.local` and in bundles stays valid across restarts. A port another process holds at a
 * start is reported and tried again until it is free.
 */
export class DeploymentListeners {
  private readonly servers = new Map<string, Promise<LoopbackServer>>();
  /** Deployments waiting for their port, by name. */
  private readonly retries = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly serve: (deploymentName: string) => DeploymentService,
    private readonly ports: { first: number; last: number },
  ) {}

  /** Opens the deployment's listener unless this emulator has it open; returns its URL. */
  async ensure(db: SqlExecutor, deployment: EmulatorDeployment): Promise<string> {
    let server = this.servers.get(deployment.name);
    if (!server) {
      server = this.start(db, deployment);
      this.servers.set(deployment.name, server);
      server.catch(() => this.servers.delete(deployment.name));
    }
    return deploymentUrlForPort((await server).port);
  }

  /**
   * The deployment's URL for an answer: its listener is opened if needed, but a stored port that
   * cannot be opened here (another emulator in this process serves it) still names the URL.
   */
  async urlOf(db: SqlExecutor, deployment: EmulatorDeployment): Promise<string> {
    try {
      return await this.ensure(db, deployment);
    } catch (error) {
      if (deployment.port === null) throw error;
      log.debug("emulated deployment served elsewhere", { deployment: deployment.name, port: deployment.port });
      return deploymentUrlForPort(deployment.port);
    }
  }

  private async start(db: SqlExecutor, deployment: EmulatorDeployment): Promise<LoopbackServer> {
    const service = this.serve(deployment.name);
    const listen = (port: number) => listenOnLoopback(port, (request) => service.handle(request), service.upgrade);
    if (deployment.port !== null) return listen(deployment.port);
    // The first listener: the next port of the range after the last one handed out (a stored cursor)
    // that no deployment holds and no process listens on. Moving on, rather than taking the lowest
    // free port, keeps a deleted deployment's URL (still in an old .env.local or bundle) from
    // reaching the next deployment until the range wraps.
    const held = new Set((await listDeploymentsWithPort(db)).map((other) => other.port));
    const size = this.ports.last - this.ports.first + 1;
    const start = (await nextPortCursor(db)) % size;
    for (let step = 0; step < size; step++) {
      const port = this.ports.first + ((start + step) % size);
      if (held.has(port)) continue;
      const server = await listen(port).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EADDRINUSE") return null;
        throw error;
      });
      if (!server) continue;
      if (await setDeploymentPort(db, deployment.name, port)) return server;
      await server.close();
      throw new EmulatorError(500, "InternalServerError", `Deployment ${deployment.name} got a port from another emulator first.`);
    }
    throw new EmulatorError(503, "NoFreePort", `No free port left in EMULATOR_PORT_RANGE (${this.ports.first}-${this.ports.last}) for deployment ${deployment.name}.`);
  }

  /**
   * Reopens the listeners of every stored deployment (server start). A port now taken is reported
   * and tried again every few seconds: the deployment answers at its URL once the port is free.
   */
  async restore(db: SqlExecutor): Promise<number> {
    const deployments = await listDeploymentsWithPort(db);
    const results = await Promise.allSettled(deployments.map((deployment) => this.ensure(db, deployment)));
    results.forEach((result, index) => {
      if (result.status === "fulfilled") return;
      const { name, port } = deployments[index];
      log.warn("emulated deployment cannot listen on its port; retrying until it is free", { deployment: name, port, error: result.reason });
      this.retryLater(db, deployments[index]);
    });
    return results.filter((result) => result.status === "fulfilled").length;
  }

  private retryLater(db: SqlExecutor, deployment: EmulatorDeployment): void {
    const timer = setTimeout(() => {
      this.retries.delete(deployment.name);
      this.ensure(db, deployment).then(
        () => log.info("emulated deployment listens on its port again", { deployment: deployment.name, port: deployment.port }),
        () => this.retryLater(db, deployment),
      );
    }, LISTEN_RETRY_MS);
    timer.unref();
    this.retries.set(deployment.name, timer);
  }

  /** Closes the listeners of these deployments (their project was deleted). */
  async closeSome(names: readonly string[]): Promise<void> {
    for (const name of names) {
      clearTimeout(this.retries.get(name));
      this.retries.delete(name);
    }
    await Promise.all(names.map(async (name) => {
      const server = this.servers.get(name);
      this.servers.delete(name);
      await (await server?.catch(() => undefined))?.close();
    }));
  }

  /** Closes every listener (shutdown, test teardown). */
  close(): Promise<void> {
    return this.closeSome([...new Set([...this.servers.keys(), ...this.retries.keys()])]);
  }
}
