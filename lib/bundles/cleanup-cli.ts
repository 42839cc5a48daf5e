import { parseArgs } from "node:util";
import type { BlobStore } from "@/lib/blob";
import { BadRequestError } from "@/lib/errors";
import type { SqlExecutor } from "@/lib/store";
import { listAllProjectIds } from "@/lib/store/projects";
import { cleanupBundles, type CleanupSummary, DEFAULT_KEEP, DEFAULT_MAX_AGE_DAYS } from "./cleanup";

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

/** Runs a parsed cleanup command; progress goes to `output` as a bar when it is a TTY. */
export async function runCleanupCommand(
  command: CleanupCommand,
  deps: { blob: BlobStore; db: SqlExecutor; output: NodeJS.WriteStream | NodeJS.WritableStream },
): Promise<CleanupSummary> {
  const projectIds = command.projectIds === "all" ? await listAllProjectIds(deps.db) : command.projectIds;
  const tty = "isTTY" in deps.output && deps.output.isTTY;
  const summary = await cleanupBundles(deps.blob, projectIds, {
    keep: command.keep,
    maxAgeDays: command.maxAgeDays,
    dryRun: command.dryRun,
    onProgress: tty ? (done, total) => deps.output.write(`\r${progressBar(done, total)}`) : undefined,
  });
  if (tty) deps.output.write("\n");
  deps.output.write(formatSummary(summary, command.dryRun) + "\n");
  return summary;
}
