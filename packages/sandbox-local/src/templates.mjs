// The templates a sandbox starts from: `base` (E2B's default, an empty home) and one per prepared
// app toolchain in the toolchain directory (`SANDBOX_SERVICE_TOOLCHAIN_DIR`), named by its folder
// there. A toolchain template's home gets `app/node_modules` hard-linked from the toolchain: cheap
// and shared, and its files stay root's and read-only (the wall hands the sandbox user only files
// with a single link), so no app can change what another app links.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { ApiError } from "./errors.mjs";

const run = promisify(execFile);
/** A toolchain folder's name (lib/toolchain: `<template>-<hash>`); never a path. */
const TOOLCHAIN_TEMPLATE = /^[a-z0-9][a-z0-9-]{0,99}$/;
/** npm rewrites its hidden lock file on every install: the sandbox gets a copy of its own. */
const HIDDEN_LOCKFILE = ".package-lock.json";

/** @param {{ toolchainDir?: string }} options */
export function createTemplates({ toolchainDir }) {
  const toolchainOf = async (templateID) => {
    if (!toolchainDir || !TOOLCHAIN_TEMPLATE.test(templateID)) return undefined;
    const modules = path.join(toolchainDir, templateID, "node_modules");
    const stat = await fs.lstat(modules).catch(() => undefined);
    return stat?.isDirectory() ? modules : undefined;
  };

  return {
    /** Throws 404 for a template that does not exist (yet: a toolchain still installing). */
    async check(templateID) {
      if (templateID !== "base" && !(await toolchainOf(templateID))) throw new ApiError(404, `template '${templateID}' not found`);
    },

    /** Fills a new sandbox's (empty, existing) home from the template. */
    async fill(templateID, home) {
      const modules = await toolchainOf(templateID);
      if (!modules) return;
      const target = path.join(home, "app", "node_modules");
      await fs.mkdir(path.dirname(target), { recursive: true });
      // Hard links need one file system; elsewhere a copy does (slower, same result).
      await run("cp", ["-al", modules, target]).catch(async () => {
        await fs.rm(target, { recursive: true, force: true });
        await run("cp", ["-a", modules, target]);
      });
      const lock = path.join(target, HIDDEN_LOCKFILE);
      if (await fs.lstat(lock).catch(() => undefined)) {
        await fs.rm(lock);
        await fs.copyFile(path.join(modules, HIDDEN_LOCKFILE), lock);
        await fs.chmod(lock, 0o644);
      }
    },
  };
}
