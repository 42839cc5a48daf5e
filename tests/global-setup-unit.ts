import path from "node:path";
import type { TestProject } from "vitest/node";
import { acquirePgliteTemplate } from "./helpers/pglite-template";
import { suiteScratchDir } from "./helpers/scratch";

/**
 * The unit project's global setup: the scratch directory and the run's initialised embedded
 * database that its files start from, without the suite's peer checks and toolchain.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const tempDir = path.join(suiteScratchDir(), "tmp");
  project.provide("scratchTempDir", tempDir);
  const template = await acquirePgliteTemplate(tempDir);
  project.provide("pgliteTemplate", template.dir);
  return template.release;
}
