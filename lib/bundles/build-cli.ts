import { setTimeout } from "node:timers/promises";
import { parseArgs } from "node:util";
import { BadRequestError, NotFoundError } from "@/lib/errors";
import type { OpenProjectSandbox } from "@/lib/projects";
import type { SqlExecutor } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import { PLATFORMS, type Platform } from "@/lib/updates/streams";
import type { BuildStaticBundleOptions, BuildStaticBundleResult } from "./build";
import type { ServerApi } from "@/lib/cli/target";
import { buildProjectBundle, type ProjectBuildRequest } from "./project-build";

export const BUILD_USAGE = "usage: npm run bundle -- --project <id> [--commit <sha>] [--message <text>] [--platform ios|android ...]";

export interface BuildCommand extends ProjectBuildRequest {
  projectId: string;
}

/** Parses the bundle command line; `--commit` defaults to the sandbox app's HEAD, `--platform` (repeatable) to both. */
export function parseBuildArgs(argv: string[]): BuildCommand {
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: "string" }, commit: { type: "string" }, message: { type: "string" }, platform: { type: "string", multiple: true } },
    strict: true,
  });
  if (!values.project) throw new BadRequestError(`--project <id> is required. ${BUILD_USAGE}`);
  const unknown = values.platform?.find((platform) => !(PLATFORMS as readonly string[]).includes(platform));
  if (unknown !== undefined) throw new BadRequestError(`--platform ${JSON.stringify(unknown)} is not ios or android. ${BUILD_USAGE}`);
  return { projectId: values.project, commitSha: values.commit, commitMessage: values.message, platforms: values.platform as Platform[] | undefined };
}

/** A build through the server: its job's result, or a failed job's `{ success: false, error }`. */
type ServerBuildAnswer = { success: true } | { success: false; error: { code: string; message: string } };

/** The job the bundle route answers with (lib/api-contract `Job`), as far as this CLI reads it. */
interface BuildJob {
  id: string;
  state: "queued" | "running" | "succeeded" | "failed";
  result: unknown;
  error: { code: string; message: string } | null;
}

/** How often a CLI asks a running server how its build job is doing. */
const JOB_POLL_MS = 500;

/**
 * Builds through a running server: POST /api/projects/<id>/bundles queues a job (202), which is
 * followed on its status route until it succeeded (its result is the build's) or failed.
 */
async function buildThroughServer(api: ServerApi, command: BuildCommand): Promise<ServerBuildAnswer> {
  const projectPath = `/api/projects/${encodeURIComponent(command.projectId)}`;
  let job = await api.request<BuildJob>("POST", `${projectPath}/bundles`, { commitSha: command.commitSha, commitMessage: command.commitMessage, platforms: command.platforms });
  while (job.state === "queued" || job.state === "running") {
    await setTimeout(JOB_POLL_MS);
    job = await api.request<BuildJob>("GET", `${projectPath}/jobs/${encodeURIComponent(job.id)}`);
  }
  if (job.state === "failed") return { success: false, error: job.error ?? { code: "job_failed", message: "The build job failed." } };
  return job.result as ServerBuildAnswer;
}

/**
 * Runs a parsed bundle command, against the store's project or through a running server's API
 * (which then builds and uploads, with its own PUBLIC_BASE_URL); prints the result as one JSON
 * line (progress and errors are the caller's to print). `success: false` is returned, not thrown.
 */
export async function runBuildCommand(
  command: BuildCommand,
  deps: ({ db: SqlExecutor; openSandbox: OpenProjectSandbox; options?: BuildStaticBundleOptions } | { api: ServerApi }) & { output: NodeJS.WritableStream },
): Promise<BuildStaticBundleResult | ServerBuildAnswer> {
  let result: BuildStaticBundleResult | ServerBuildAnswer;
  if ("api" in deps) {
    result = await buildThroughServer(deps.api, command);
  } else {
    const project = await getProject(deps.db, command.projectId);
    if (!project) throw new NotFoundError(`No project ${command.projectId} in the store.`, "project_not_found");
    result = await buildProjectBundle(project, await deps.openSandbox(project), command, deps.options);
  }
  deps.output.write(JSON.stringify(result) + "\n");
  return result;
}
