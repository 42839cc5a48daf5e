import { log } from "@/lib/log";
import type { SqlExecutor } from "@/lib/store";
import { EmulatorError } from "./http";
import { listenOnLoopback, type LoopbackServer, type UpgradeHandler } from "./node-http";
import { listDeploymentsWithPort, setDeploymentPort, type EmulatorDeployment } from "./store";

/** What answers the requests of one deployment's listener. */
export interface DeploymentService {
  handle(request: Request): Promise<Response>;
  upgrade: UpgradeHandler;
}

/** URL of a deployment whose listener has this port: a host root, as hosted deployments are. */
export function deploymentUrlForPort(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/**
 * One loopback HTTP listener per emulated deployment, so clients that resolve `/api/...` against
 * the deployment URL reach it. The first listener's port is stored with the deployment; later
 * starts reopen that port, so stored deployment URLs stay valid across restarts.
 */
export class DeploymentListeners {
  private readonly servers = new Map<string, Promise<LoopbackServer>>();

  constructor(private readonly serve: (deploymentName: string) => DeploymentService) {}

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
    const server = await listenOnLoopback(deployment.port ?? 0, (request) => service.handle(request), service.upgrade);
    if (deployment.port === null && !(await setDeploymentPort(db, deployment.name, server.port))) {
      await server.close();
      throw new EmulatorError(500, "InternalServerError", `Deployment ${deployment.name} got a port from another emulator first.`);
    }
    return server;
  }

  /** Reopens the listeners of every stored deployment (server start). A port now taken is logged and skipped. */
  async restore(db: SqlExecutor): Promise<number> {
    const deployments = await listDeploymentsWithPort(db);
    const results = await Promise.allSettled(deployments.map((deployment) => this.ensure(db, deployment)));
    results.forEach((result, index) => {
      if (result.status === "rejected") {
        log.warn("emulated deployment could not listen again", { deployment: deployments[index].name, port: deployments[index].port, error: result.reason });
      }
    });
    return results.filter((result) => result.status === "fulfilled").length;
  }

  /** Closes the listeners of these deployments (their project was deleted). */
  async closeSome(names: readonly string[]): Promise<void> {
    await Promise.all(names.map(async (name) => {
      const server = this.servers.get(name);
      this.servers.delete(name);
      await (await server?.catch(() => undefined))?.close();
    }));
  }

  /** Closes every listener (shutdown, test teardown). */
  close(): Promise<void> {
    return this.closeSome([...this.servers.keys()]);
  }
}
