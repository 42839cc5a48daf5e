import type { Sql } from "@/lib/store";
import type { EmulatorIdentity } from "./identity";
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
  /** Absolute URL of the mount, e.g. `http://127.0.0.1:4010/emulator`; deployment URLs hang below it. */
  baseUrl: string;
}

/** URL of an emulated deployment: served by the same handler, so it resolves on loopback. */
export function deploymentUrl(context: EmulatorContext, deploymentName: string): string {
  return `${context.baseUrl}/deployments/${deploymentName}`;
}
