import type { Sql } from "@/lib/store";
import type { EmulatorIdentity } from "./identity";
import type { DeploymentListeners } from "./listeners";
import type { FunctionRuntimes } from "./runtime";
import type { SnapshotBlobs } from "./snapshot-blobs";
import type { DeploymentFiles } from "./storage";
import type { EmulatorTeam } from "./store";

/** What every emulator handler gets. */
export interface EmulatorContext {
  db: Sql;
  identity: EmulatorIdentity;
  /** The built-in team (the one the consent page grants and the default token belongs to). */
  builtInTeam: EmulatorTeam;
  /** Projects per team unless the team row says otherwise. */
  projectQuota: number;
  now: () => Date;
  /** The deployments' loopback listeners of this emulator. */
  listeners: DeploymentListeners;
  /** Where pushed modules are written for the workers that load them. */
  modulesDir: string;
  /** How long loading a push's modules may take. */
  analyseTimeoutMs: number;
  /** The workers running the deployments' functions. */
  runtimes: FunctionRuntimes;
  /** The deployments' file storage. */
  files: DeploymentFiles;
  /** Snapshot exports and import uploads. */
  snapshots: SnapshotBlobs;
}
