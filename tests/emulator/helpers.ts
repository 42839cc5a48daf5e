import { createEmulator, type Emulator, type EmulatorOptions } from "@/lib/emulator";

export const ORIGIN = "http://127.0.0.1:4010";
export const BASE = `${ORIGIN}/emulator`;

/** Calls an emulator's handler directly (no HTTP), the way the app route does. */
export function emulatorClient(options: EmulatorOptions = {}) {
  const emulator: Emulator = createEmulator(options);
  const { identity } = emulator;
  const call = (path: string, init: RequestInit = {}) => emulator.handle(new Request(BASE + path, init));
  const json = (body: unknown, authorization?: string): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization && { authorization }) },
    body: JSON.stringify(body),
  });
  const form = (fields: Record<string, string>): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  const teamBearer = `Bearer ${identity.teamToken}`;

  /** create_project + provision_and_authorize on the built-in team. */
  async function provision(projectName: string) {
    const created = await (await call("/api/create_project", json({ team: identity.teamSlug, projectName, deploymentType: "dev" }, teamBearer))).json();
    const deployment = await (
      await call("/api/deployment/provision_and_authorize", json({ teamSlug: identity.teamSlug, projectSlug: created.projectSlug, deploymentType: "dev" }, teamBearer))
    ).json();
    return { created, deployment: deployment as { deploymentName: string; url: string; adminKey: string } };
  }

  return { emulator, identity, call, json, form, teamBearer, provision };
}
