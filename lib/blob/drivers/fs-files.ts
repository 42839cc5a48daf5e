import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";

/**
 * Blob files of the fs driver. Files are named by version id (hex), never by pathname, so no
 * user input reaches the filesystem and `a/b` and `a/b/c` can both exist:
 *   <root>/objects/<first 2 hex>/<version>   committed versions
 *   <root>/tmp/<version>.part                 uploads in progress
 */
export interface BlobFiles {
  /** Streams `source` to a temp file, fsyncs it and renames it into place; returns its size. */
  write(version: string, source: Buffer | Readable): Promise<number>;
  /** Opens a committed version for reading; null when it no longer exists. */
  open(version: string): Promise<fs.FileHandle | null>;
  /** Removes a version; a missing file is not an error. */
  remove(version: string): Promise<void>;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT";

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createBlobFiles(rootDir: string): BlobFiles {
  const tmpDir = path.join(rootDir, "tmp");
  const objectPath = (version: string) => {
    if (!/^[0-9a-f]{32}$/.test(version)) throw new Error(`Not a blob version id: ${version}`);
    return path.join(rootDir, "objects", version.slice(0, 2), version);
  };

  return {
    async write(version, source) {
      const finalPath = objectPath(version);
      const tmpPath = path.join(tmpDir, `${version}.part`);
      await fs.mkdir(tmpDir, { recursive: true });
      const handle = await fs.open(tmpPath, "wx", 0o644);
      try {
        let size = 0;
        try {
          // Awaiting each write is the backpressure: the stream is read as fast as the disk takes it.
          for await (const chunk of Buffer.isBuffer(source) ? [source] : source) {
            const { bytesWritten } = await handle.write(chunk as Uint8Array);
            size += bytesWritten;
          }
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fs.mkdir(path.dirname(finalPath), { recursive: true });
        await fs.rename(tmpPath, finalPath);
        // The rename is durable only once the directory entry is on disk.
        await fsyncDirectory(path.dirname(finalPath));
        return size;
      } catch (error) {
        await fs.rm(tmpPath, { force: true });
        throw error;
      }
    },

    async open(version) {
      try {
        return await fs.open(objectPath(version), "r");
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },

    async remove(version) {
      await fs.rm(objectPath(version), { force: true });
    },
  };
}

/** Inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * A web stream of `range` of an open file, read on demand; closes the handle when done,
 * cancelled or failed.
 */
export function fileHandleStream(handle: fs.FileHandle, range: ByteRange): ReadableStream<Uint8Array> {
  let position = range.start;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const length = Math.min(READ_CHUNK_BYTES, range.end + 1 - position);
          const buffer = length > 0 ? Buffer.allocUnsafe(length) : null;
          const { bytesRead } = buffer ? await handle.read(buffer, 0, length, position) : { bytesRead: 0 };
          if (!buffer || bytesRead === 0) {
            await handle.close();
            controller.close();
            return;
          }
          position += bytesRead;
          controller.enqueue(buffer.subarray(0, bytesRead));
        } catch (error) {
          await handle.close().catch(() => undefined);
          controller.error(error);
        }
      },
      async cancel() {
        await handle.close();
      },
    },
    { highWaterMark: 0 },
  );
}
