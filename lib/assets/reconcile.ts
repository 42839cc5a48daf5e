import { parseArgs } from "node:util";
import type { ServerApi } from "@/lib/cli/target";
import { BadRequestError } from "@/lib/errors";
import { isSandboxError, type Sandbox, SandboxNotFoundError, type SandboxProvider } from "@/lib/sandbox";
import type { SqlExecutor } from "@/lib/store";
import { upsertProjectAsset } from "@/lib/store/assets";
import { getProject, listAllProjectIds, type Project } from "@/lib/store/projects";
import { takeAssetInventory } from "./inventory";
import { type AssetManifest, readAssetManifest } from "./manifest";
import type { AssetStorage } from "./store";

/** What reconciling needs: the asset storage, the store (to find projects) and a way to reach each project's sandbox. */
export interface AssetMaintenance extends AssetStorage {
  db: SqlExecutor;
  sandboxes: SandboxProvider;
}

/** The outcome for one project; with `dryRun` nothing listed was changed. */
export interface AssetReconcileReport {
  projectId: string;
  dryRun: boolean;
  /** Whether the sandbox's manifest was read; a project without a live sandbox counts as an empty one. */
  sandbox: "read" | "none";
  /** Blobs under the assets prefix that neither the record nor the manifest knows: deleted. */
  orphanBlobs: string[];
  /** Manifest entries with a blob but no record (uploads of earlier versions): recorded. */
  recorded: string[];
  /** Recorded or listed assets whose blob is gone: reported only, their sandbox files may be the last copy. */
  missingBlobs: string[];
}

/**
 * Reconciles one project's assets under its manifest lock: orphan blobs are deleted, assets
 * listed in the sandbox manifest but never recorded are recorded, and entries whose blob is gone
 * are reported.
 */
export async function reconcileProjectAssets(project: Project, deps: AssetMaintenance, options: { dryRun: boolean }): Promise<AssetReconcileReport> {
  return deps.manifestLock.run(project.id, async (db) => {
    const sandbox = await liveSandbox(project, deps.sandboxes);
    const manifest: AssetManifest = sandbox ? await readAssetManifest(sandbox) : { assets: {} };
    const inventory = await takeAssetInventory({ userId: project.ownerId, projectId: project.id }, manifest, { db, blobs: deps.blobs });
    if (!options.dryRun) {
      for (const asset of inventory.unrecorded) await upsertProjectAsset(db, project.id, asset);
      if (inventory.orphanBlobs.length > 0) await deps.blobs.del(inventory.orphanBlobs);
    }
    return {
      projectId: project.id,
      dryRun: options.dryRun,
      sandbox: sandbox ? "read" : "none",
      orphanBlobs: inventory.orphanBlobs,
      recorded: inventory.unrecorded.map((asset) => asset.filename),
      missingBlobs: inventory.missingBlobs,
    };
  });
}

async function liveSandbox(project: Project, sandboxes: SandboxProvider): Promise<Sandbox | null> {
  if (!project.sandboxId) return null;
  try {
    return await sandboxes.connect(project.sandboxId);
  } catch (error) {
    if (isSandboxError(error, SandboxNotFoundError)) return null;
    throw error;
  }
}

export const RECONCILE_USAGE = "usage: npm run assets:reconcile -- (--project <id> | --all) [--dry-run]";

export interface ReconcileCommand {
  projectIds: string[] | "all";
  dryRun: boolean;
}

/** Parses the reconcile command line; exactly one of --project (repeatable) or --all. */
export function parseReconcileArgs(argv: string[]): ReconcileCommand {
  const { values } = parseArgs({
    args: argv,
    options: {
      project: { type: "string", multiple: true },
      all: { type: "boolean", default: false },
      "dry-run": { type: "boolean", default: false },
    },
    strict: true,
  });
  const projects = values.project ?? [];
  if (values.all === projects.length > 0) throw new BadRequestError(`Pass either --project <id> or --all. ${RECONCILE_USAGE}`);
  return { projectIds: values.all ? "all" : projects, dryRun: values["dry-run"] };
}

/** One line per finding, then a summary line. */
export function formatReconcileReports(reports: AssetReconcileReport[], dryRun: boolean): string {
  const lines = reports.flatMap((report) => [
    ...report.orphanBlobs.map((pathname) => `${report.projectId}: orphan blob ${pathname} ${dryRun ? "(would delete)" : "deleted"}`),
    ...report.recorded.map((filename) => `${report.projectId}: unrecorded asset ${filename} ${dryRun ? "(would record)" : "recorded"}`),
    ...report.missingBlobs.map((filename) => `${report.projectId}: asset ${filename} has no blob (left as it is)`),
    ...(report.sandbox === "none" ? [`${report.projectId}: no live sandbox; its manifest was not read`] : []),
  ]);
  const count = (key: "orphanBlobs" | "recorded" | "missingBlobs") => reports.reduce((sum, report) => sum + report[key].length, 0);
  lines.push(
    `${reports.length} project(s): ${count("orphanBlobs")} orphan blob(s) ${dryRun ? "to delete" : "deleted"}, ` +
      `${count("recorded")} asset(s) ${dryRun ? "to record" : "recorded"}, ${count("missingBlobs")} asset(s) without blob`,
  );
  return lines.join("\n") + "\n";
}

/** Where the command works: through a running server's API, or on the store and storage itself. */
export type ReconcileTarget = { api: ServerApi } | AssetMaintenance;

/** The reports of `command`'s projects, one request per project when going through a server. */
async function reconcileThroughServer(api: ServerApi, command: ReconcileCommand): Promise<AssetReconcileReport[]> {
  const projectIds =
    command.projectIds === "all"
      ? (await api.request<{ projects: { id: string }[] }>("GET", "/api/projects")).projects.map((project) => project.id)
      : command.projectIds;
  const reports: AssetReconcileReport[] = [];
  for (const projectId of projectIds) {
    const path = `/api/projects/${encodeURIComponent(projectId)}/assets/reconcile`;
    reports.push(await api.request<AssetReconcileReport>("POST", path, { dryRun: command.dryRun }));
  }
  return reports;
}

/**
 * Runs a parsed reconcile command and writes its findings to `output`. Through a server, `--all`
 * means every project of the token's owner.
 */
export async function runReconcileCommand(
  command: ReconcileCommand,
  deps: ReconcileTarget & { output: NodeJS.WritableStream },
): Promise<AssetReconcileReport[]> {
  let reports: AssetReconcileReport[];
  if ("api" in deps) {
    reports = await reconcileThroughServer(deps.api, command);
  } else {
    const projectIds = command.projectIds === "all" ? await listAllProjectIds(deps.db) : command.projectIds;
    reports = [];
    for (const projectId of projectIds) {
      const project = await getProject(deps.db, projectId);
      if (!project) throw new BadRequestError(`No project ${projectId}.`);
      reports.push(await reconcileProjectAssets(project, deps, { dryRun: command.dryRun }));
    }
  }
  deps.output.write(formatReconcileReports(reports, command.dryRun));
  return reports;
}
