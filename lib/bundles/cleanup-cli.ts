import { parseArgs } from "node:util";
import type { BlobStore } from "@/lib/blob";
import { BadRequestError } from "@/lib/errors";
import type { SqlExecutor } from "@/lib/store";
import { listAllProjectIds } from "@/lib/store/projects";
import { cleanupBundles, type CleanupOptions, type CleanupSummary, DEFAULT_KEEP, DEFAULT_MAX_AGE_DAYS } from "./cleanup";
import type { ServerApi } from "@/lib/cli/target";

export const CLEANUP_USAGE =
  "usage: npm run cleanup -- (--project <id> | --all) [--keep 5] [--max-age-days 30] [--dry-run]";

export interface CleanupCommand {
  projectIds: string[] | "all";
  keep: number;
  maxAgeDays: number;
  dryRun: boolean;
}

function nonNegativeInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new BadRequestError(`--${name} must be a whole number >= 0.`);
  return parsed;
}

/** Parses the cleanup command line; exactly one of --project (repeatable) or --all. */
export function parseCleanupArgs(argv: string[]): CleanupCommand {
  const { values } = parseArgs({
    args: argv,
    options: {
      project: { type: "string", multiple: true },
      all: { type: "boolean", default: false },
      keep: { type: "string" },
      "max-age-days": { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
    strict: true,
  });
  const projects = values.project ?? [];
  if (values.all === projects.length > 0) throw new BadRequestError(`Pass either --project <id> or --all. ${CLEANUP_USAGE}`);
  return {
    projectIds: values.all ? "all" : projects,
    keep: nonNegativeInteger("keep", values.keep, DEFAULT_KEEP),
    maxAgeDays: nonNegativeInteger("max-age-days", values["max-age-days"], DEFAULT_MAX_AGE_DAYS),
    dryRun: values["dry-run"],
  };
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} projects`;
}

export function formatSummary(summary: CleanupSummary, dryRun: boolean): string {
  const verb = dryRun ? "would delete" : "deleted";
  const megabytes = (summary.bytesDeleted / 1_048_576).toFixed(2);
  return (
    `${summary.projects} project(s): kept ${summary.commitsKept} commit(s), ${verb} ${summary.commitsDeleted} ` +
    `commit(s), ${summary.blobsDeleted} blob(s), ${summary.bytesDeleted} bytes (${megabytes} MB)`
  );
}

/**
 * Cleans projects one by one through a running server (POST /api/projects/<id>/bundles/cleanup,
 * owner only); `--all` means every project of the token's owner (GET /api/projects).
 */
async function cleanupThroughServer(api: ServerApi, command: CleanupCommand, options: CleanupOptions): Promise<CleanupSummary> {
  const projectIds =
    command.projectIds === "all"
      ? (await api.request<{ projects: { id: string }[] }>("GET", "/api/projects")).projects.map((project) => project.id)
      : command.projectIds;
  const summary: CleanupSummary = { projects: 0, commitsKept: 0, commitsDeleted: 0, blobsDeleted: 0, bytesDeleted: 0 };
  for (const projectId of projectIds) {
    const body = { keep: options.keep, maxAgeDays: options.maxAgeDays, dryRun: options.dryRun };
    const part = await api.request<CleanupSummary>("POST", `/api/projects/${encodeURIComponent(projectId)}/bundles/cleanup`, body);
    for (const key of Object.keys(summary) as (keyof CleanupSummary)[]) summary[key] += part[key];
    options.onProgress?.(summary.projects, projectIds.length, summary);
  }
  return summary;
}

/**
 * Runs a parsed cleanup command on the store and blob store, or through a running server's API;
 * progress goes to `output` as a bar when it is a TTY.
 */
export async function runCleanupCommand(
  command: CleanupCommand,
  deps: ({ blob: BlobStore; db: SqlExecutor } | { api: ServerApi }) & { output: NodeJS.WriteStream | NodeJS.WritableStream },
): Promise<CleanupSummary> {
  const tty = "isTTY" in deps.output && deps.output.isTTY;
  const options: CleanupOptions = {
    db: "db" in deps ? deps.db : undefined,
    keep: command.keep,
    maxAgeDays: command.maxAgeDays,
    dryRun: command.dryRun,
    onProgress: tty ? (done, total) => deps.output.write(`\r${progressBar(done, total)}`) : undefined,
  };
  const summary =
    "api" in deps
      ? await cleanupThroughServer(deps.api, command, options)
      : await cleanupBundles(deps.blob, command.projectIds === "all" ? await listAllProjectIds(deps.db) : command.projectIds, options);
  if (tty) deps.output.write("\n");
  deps.output.write(formatSummary(summary, command.dryRun) + "\n");
  return summary;
}
