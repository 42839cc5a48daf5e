import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { log } from "@/lib/log";
import { SANDBOX_HOME, type Sandbox, type SandboxFiles } from "@/lib/sandbox";
import { ASSET_MANIFEST_PATH, type AssetManifest, serializeAssetManifest } from "./manifest";

/** Per-upload staging directories live here, outside the app's git repository. */
export const ASSET_STAGING_DIR = `${SANDBOX_HOME}/.asset-staging`;
/**
 * Bytes sent to the sandbox per `files.write`: the port takes whole buffers, so a file is sent in
 * parts of this size and joined inside the sandbox, keeping memory per upload at one part.
 */
const SANDBOX_PART_BYTES = 2 * 1024 * 1024;

/** A directory in the sandbox holding files not yet visible at their final paths. */
export interface Staging {
  dir: string;
}

/** A file change applied by {@link commitStaging}. */
export type StagedChange = { move: string; to: string } | { remove: string };

export function createStaging(): Staging {
  return { dir: `${ASSET_STAGING_DIR}/${crypto.randomUUID()}` };
}

/**
 * Copies a host file into the staging directory (as `name`) and returns its sandbox path. A
 * sandbox on the host's filesystem copies it directly; for the others, large files go as numbered
 * parts joined with `cat`, so at most one part is in memory at a time.
 */
export async function stageHostFile(sandbox: Sandbox, staging: Staging, hostPath: string, size: number, name = "data"): Promise<string> {
  const target = `${staging.dir}/${name}`;
  if (sandbox.files.copyFromHost) {
    await sandbox.files.copyFromHost(target, hostPath);
    return target;
  }
  const partCount = Math.max(1, Math.ceil(size / SANDBOX_PART_BYTES));
  const buffer = Buffer.allocUnsafe(Math.min(Math.max(size, 1), SANDBOX_PART_BYTES));
  const handle = await fs.open(hostPath);
  try {
    for (let index = 0; index < partCount; index++) {
      const { bytesRead } = await handle.read({ buffer, position: index * SANDBOX_PART_BYTES });
      const partPath = partCount === 1 ? target : `${staging.dir}/part-${String(index).padStart(6, "0")}`;
      await sandbox.files.write(partPath, buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  if (partCount > 1) {
    // Zero-padded names make the glob's order the parts' order.
    await sandbox.commands.run('cat -- "$STAGING"/part-* > "$TARGET" && rm -f -- "$STAGING"/part-*', {
      envs: { STAGING: staging.dir, TARGET: target },
    });
  }
  return target;
}

/**
 * Makes staged changes visible: files are moved (renamed) into place, removed files deleted, then
 * the new manifest, written into the staging directory first, is renamed over the old one, so
 * readers see either the old manifest or the new one, never half. A sandbox with `files.rename`
 * (local) does it through its filesystem, without starting a process; the others in one command,
 * with paths travelling as environment variables, never pasted into the shell text.
 */
export async function commitStaging(sandbox: Sandbox, staging: Staging, changes: StagedChange[], manifest: AssetManifest): Promise<void> {
  const manifestTemp = `${staging.dir}/manifest.json`;
  await sandbox.files.write(manifestTemp, serializeAssetManifest(manifest));
  if (canRename(sandbox.files)) await commitThroughFiles(sandbox.files, staging, changes, manifestTemp);
  else await commitInOneCommand(sandbox, staging, changes, manifestTemp);
}

type RenamingFiles = SandboxFiles & Required<Pick<SandboxFiles, "rename">>;
const canRename = (files: SandboxFiles): files is RenamingFiles => files.rename !== undefined;

/** Moved files go back into the staging directory when a later step fails, to be discarded with it. */
async function commitThroughFiles(files: RenamingFiles, staging: Staging, changes: StagedChange[], manifestTemp: string): Promise<void> {
  const moved: { from: string; to: string }[] = [];
  const moveInto = async (from: string, to: string) => {
    await files.makeDir(path.posix.dirname(to));
    await files.rename(from, to);
    moved.push({ from, to });
  };
  try {
    for (const change of changes) {
      if ("remove" in change) await files.remove(change.remove);
      else await moveInto(change.move, change.to);
    }
    await moveInto(manifestTemp, ASSET_MANIFEST_PATH);
  } catch (error) {
    for (const { from, to } of moved.reverse()) await files.rename(to, from).catch(() => undefined);
    throw error;
  }
  await files.remove(staging.dir);
}

async function commitInOneCommand(sandbox: Sandbox, staging: Staging, changes: StagedChange[], manifestTemp: string): Promise<void> {
  const envs: Record<string, string> = { STAGING: staging.dir, MANIFEST_TEMP: manifestTemp, MANIFEST: ASSET_MANIFEST_PATH };
  const steps = changes.map((change, index) => {
    if ("remove" in change) {
      envs[`REMOVE_${index}`] = change.remove;
      return `rm -f -- "$REMOVE_${index}"`;
    }
    Object.assign(envs, { [`FROM_${index}`]: change.move, [`TO_${index}`]: change.to });
    return `mkdir -p -- "$(dirname -- "$TO_${index}")" && mv -f -- "$FROM_${index}" "$TO_${index}"`;
  });
  const script = [...steps, 'mkdir -p -- "$(dirname -- "$MANIFEST")"', 'mv -f -- "$MANIFEST_TEMP" "$MANIFEST"', 'rm -rf -- "$STAGING"'].join(" && ");
  await sandbox.commands.run(script, { envs });
}

/** Removes a staging directory after a failure; a failure to clean up is logged, not thrown. */
export async function discardStaging(sandbox: Sandbox, staging: Staging): Promise<void> {
  await sandbox.files.remove(staging.dir).catch((error: unknown) => {
    log.warn("could not remove an asset staging directory", { sandboxId: sandbox.sandboxId, dir: staging.dir, error });
  });
}
