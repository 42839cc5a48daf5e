import crypto from "node:crypto";
import type { BlobStore } from "@/lib/blob";
import { log } from "@/lib/log";
import { EmulatorError } from "./http";

/** A blob store failure, as the deployment answers it (an infrastructure fault: 503). */
async function available<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    log.warn("emulator snapshot blob store failed", { operation, error });
    throw new EmulatorError(503, "StorageUnavailable", "The blob store of snapshot exports and imports is unavailable; try again.");
  }
}

/**
 * Where snapshot exports (ZIPs) and import uploads live: blobs of the product's blob store under
 * `emulator-snapshots/<deployment>/`, at pathnames keyed by the installation's secret (nobody who
 * cannot reach the deployment with its key finds them).
 */
export class SnapshotBlobs {
  constructor(
    private readonly blobs: () => BlobStore,
    /** Keys the blobs' pathnames. */
    private readonly pathKey: Buffer,
  ) {}

  /** The pathname of one named blob of the deployment (an export's timestamp, an upload's token and part). */
  pathname(deploymentName: string, name: string): string {
    return `emulator-snapshots/${deploymentName}/${crypto.createHmac("sha256", this.pathKey).update(`${deploymentName}\n${name}`).digest("hex")}`;
  }

  async write(pathname: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await available("write", () => this.blobs().put(pathname, bytes, { access: "public", allowOverwrite: true, contentType }));
  }

  /** The blob's bytes; null when it is gone. */
  async read(pathname: string): Promise<Uint8Array<ArrayBuffer> | null> {
    return available("read", async () => {
      const found = await this.blobs().get(pathname);
      return found ? new Uint8Array(await new Response(found.stream).arrayBuffer()) : null;
    });
  }

  async delete(pathnames: string[]): Promise<void> {
    if (pathnames.length > 0) await available("delete", () => this.blobs().del(pathnames));
  }
}
