import { parseArgs } from "node:util";
import { BadRequestError, NotFoundError } from "@/lib/errors";
import type { OpenProjectSandbox } from "@/lib/projects";
import type { SqlExecutor } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import type { BuildStaticBundleOptions, BuildStaticBundleResult } from "./build";
import type { ServerApi } from "@/lib/cli/target";
import { buildProjectBundle, type ProjectBuildRequest } from "./project-build";

export const BUILD_USAGE = "usage: npm run bundle -- --project <id> [--commit <sha>] [--message <text>]";

export interface BuildCommand extends ProjectBuildRequest {
  projectId: string;
}

/** Parses the bundle command line; `--commit` defaults to the sandbox app's HEAD. */
export function parseBuildArgs(argv: string[]): BuildCommand {
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: "string" }, commit: { type: "string" }, message: { type: "string" } },
    strict: true,
  });
  if (!values.project) throw new BadRequestError(`--project <id> is required. ${BUILD_USAGE}`);
  return { projectId: values.project, commitSha: values.commit, commitMessage: values.message };
}

/** What the bundle route answers: the build result, or a failed build's `{ success: false, error }`. */
type ServerBuildAnswer = { success: true } | { success: false; error: { code: string; message: string } };

/** Builds through a running server (POST /api/projects/<id>/bundles); a failed build's answer (4xx/5xx with `success: false`) is returned. */
function buildThroughServer(api: ServerApi, command: BuildCommand): Promise<ServerBuildAnswer> {
  return api.request<ServerBuildAnswer>(
    "POST",
    `/api/projects/${encodeURIComponent(command.projectId)}/bundles`,
    { commitSha: command.commitSha, commitMessage: command.commitMessage },
    (payload) => "success" in payload && payload.success === false,
  );
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
