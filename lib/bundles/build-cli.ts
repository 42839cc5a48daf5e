import { parseArgs } from "node:util";
import { BadRequestError, NotFoundError } from "@/lib/errors";
import type { SqlExecutor } from "@/lib/store";
import { getProject } from "@/lib/store/projects";
import type { BuildStaticBundleOptions, BuildStaticBundleResult } from "./build";
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

/**
 * Runs a parsed bundle command against the store's project; prints the result as one JSON line
 * (progress and errors are the caller's to print). `success: false` is returned, not thrown.
 */
export async function runBuildCommand(
  command: BuildCommand,
  deps: { db: SqlExecutor; output: NodeJS.WritableStream; options?: BuildStaticBundleOptions },
): Promise<BuildStaticBundleResult> {
  const project = await getProject(deps.db, command.projectId);
  if (!project) throw new NotFoundError(`No project ${command.projectId} in the store.`, "project_not_found");
  const result = await buildProjectBundle(project, command, deps.options);
  deps.output.write(JSON.stringify(result) + "\n");
  return result;
}
