import { getConfig } from "@/lib/config";
import { currentInstance } from "@/lib/instance";
import { log } from "@/lib/log";
import type { Realtime } from "@/lib/realtime";
import { getSandboxProvider, isSandboxError, SandboxNotFoundError, type SandboxProvider } from "@/lib/sandbox";
import { processSingleton, resetProcessSingleton } from "@/lib/singletons";
import type { Sql } from "@/lib/store";
import {
  claimOrphanedDevServerLease,
  dropDevServerLease,
  listOrphanedDevServerLeases,
  releaseDevServerLeases,
  type DevServerLease,
} from "@/lib/store/dev-server-leases";
import type { InstanceIdentity } from "@/lib/store/instances";
import { connectBackendDevServer, detachBackendDevServers, startBackendDevServer } from "./backend-dev-server";
import { getBackendCredentials } from "./credentials";

export interface LeaseCheckOptions {
  /** Where re-attached servers' sandboxes are opened. @default getSandboxProvider() */
  provider?: SandboxProvider;
  /** Where re-attached servers' errors go. @default getRealtime() */
  realtime?: Realtime;
}

/** How a taken-over server was brought back. */
export type Reattachment = "connected" | "restarted";

async function reattach(lease: DevServerLease, owner: InstanceIdentity, db: Sql, options: LeaseCheckOptions): Promise<Reattachment | null> {
  const credentials = await getBackendCredentials(lease.projectId);
  if (!credentials) {
    // Disconnected meanwhile: there is nothing to bring back.
    await dropDevServerLease(db, lease.projectId, owner, lease.pid);
    return null;
  }
  const sandbox = await (options.provider ?? getSandboxProvider()).connect(lease.sandboxId);
  if (await connectBackendDevServer(sandbox, lease.projectId, lease.pid, options)) return "connected";
  const backend = { adminKey: credentials.adminKey, deploymentUrl: credentials.deploymentUrl, realtime: options.realtime };
  return (await startBackendDevServer(sandbox, lease.projectId, backend)) ? "restarted" : null;
}

/**
 * One pass of the lease check: takes every backend dev server lease nobody alive holds (its
 * owner's heartbeat expired, it restarted, or it handed the lease back at shutdown) and
 * re-attaches the server: E2B connects to the running process, the local driver restarts it
 * (its output stream died with the owner). Resolves with what it re-attached, per project id.
 */
export async function reattachOrphanedBackendDevServers(db: Sql, options: LeaseCheckOptions = {}): Promise<Map<string, Reattachment>> {
  const owner = await currentInstance(db);
  const reattached = new Map<string, Reattachment>();
  for (const projectId of await listOrphanedDevServerLeases(db)) {
    const lease = await claimOrphanedDevServerLease(db, projectId, owner);
    if (!lease) continue;
    try {
      const how = await reattach(lease, owner, db, options);
      if (how) reattached.set(projectId, how);
      log.info("backend dev server taken over", { projectId, how, previousOwner: lease.ownerInstanceId });
    } catch (error) {
      if (isSandboxError(error, SandboxNotFoundError)) {
        await dropDevServerLease(db, projectId, owner, lease.pid);
        continue;
      }
      // Handed back, so this or another instance tries again at the next check.
      log.warn("taking over a backend dev server failed", { projectId, error });
      await releaseDevServerLeases(db, owner, projectId);
    }
  }
  return reattached;
}

const LEASE_CHECK = "backendDevServerLeaseCheck";

interface LeaseCheck {
  timer?: NodeJS.Timeout;
  /** The pass under way, if any. */
  pass?: Promise<void>;
  stopped: boolean;
}

/**
 * Runs {@link reattachOrphanedBackendDevServers} every BACKEND_DEV_LEASE_CHECK_MS until the
 * process singletons are reset (shutdown), which waits for the pass under way. A pass never
 * overlaps the previous one.
 */
export function startBackendDevServerLeaseCheck(db: Sql, options: LeaseCheckOptions = {}): void {
  processSingleton(
    LEASE_CHECK,
    () => {
      const check: LeaseCheck = { stopped: false };
      const schedule = () => {
        if (check.stopped) return;
        check.timer = setTimeout(() => {
          check.pass = reattachOrphanedBackendDevServers(db, options)
            .then(
              () => undefined,
              (error: unknown) => log.warn("backend dev server lease check failed", { error }),
            )
            .finally(schedule);
        }, getConfig().BACKEND_DEV_LEASE_CHECK_MS);
        check.timer.unref();
      };
      schedule();
      return check;
    },
    {
      close: async (check) => {
        check.stopped = true;
        clearTimeout(check.timer);
        await check.pass;
      },
    },
  );
}

/**
 * Shutdown: stops taking leases (once the pass under way ended), hands back every one this
 * instance holds (another instance takes them at its next check, without waiting for this one's
 * heartbeat to expire), then stops reading the servers' output. Resolves with how many leases
 * were handed back.
 */
export async function handBackBackendDevServers(db: Sql): Promise<number> {
  await resetProcessSingleton(LEASE_CHECK);
  const released = await releaseDevServerLeases(db, await currentInstance(db));
  await detachBackendDevServers();
  return released;
}
