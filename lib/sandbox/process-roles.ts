import type { ProcessInfo, Sandbox } from "./port";

/**
 * Environment variable that tags long-running processes with a role (`app-dev-server`, ...).
 * `commands.list()` reports the `envs` a command was started with, on E2B as well, so the tag
 * finds a dev server again after a reconnect, when no handle is left.
 */
export const PROCESS_ROLE_VARIABLE = "SANDBOX_PROCESS_ROLE";

/** The environment to add to a command so {@link findProcessesByRole} finds it. */
export const roleEnvs = (role: string): Record<string, string> => ({ [PROCESS_ROLE_VARIABLE]: role });

/** Running processes started with the given role. */
export async function findProcessesByRole(sandbox: Sandbox, role: string): Promise<ProcessInfo[]> {
  return (await sandbox.commands.list()).filter((info) => info.envs[PROCESS_ROLE_VARIABLE] === role);
}

/** Kills every process with the given role; answers how many were running. */
export async function stopProcessesByRole(sandbox: Sandbox, role: string): Promise<number> {
  const processes = await findProcessesByRole(sandbox, role);
  const killed = await Promise.all(processes.map((info) => sandbox.commands.kill(info.pid)));
  return killed.filter(Boolean).length;
}
