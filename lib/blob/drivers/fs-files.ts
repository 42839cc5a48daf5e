import fs from "node:fs/promises";
import path from "node:path";
import { close, createReadStream, open, read } from "node:fs";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import type { ByteRange } from "../port";

/**
 * Blob files of the fs driver. Files are named by version id (hex), never by pathname, so no
 * user input reaches the filesystem and `a/b` and `a/b/c` can both exist:
 *   <root>/objects/<first 2 hex>/<version>   committed versions
 *   <root>/tmp/<version>.part                 uploads in progress
 */
export interface BlobFiles {
  /** Streams `source` to a temp file, fsyncs it and renames it into place; returns its size. */
  write(version: string, source: Buffer | Readable): Promise<number>;
  /**
   * Makes a finished host file the version's bytes: fsynced and hard-linked into place, so the
   * bytes are written once and the file stays readable at `hostPath` (which the caller removes)
   * meanwhile; on another filesystem it is copied through a temp file like `write`. Returns its
   * size. The file must not change afterwards: the version is those very bytes.
   */
  adopt(version: string, hostPath: string): Promise<number>;
  /** Opens a committed version for reading; null when it no longer exists. */
  open(version: string): Promise<BlobFile | null>;
  /** Removes a version; a missing file is not an error. */
  remove(version: string): Promise<void>;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT";

/** fsyncs a file or directory; `mode` also sets the permissions of a file on the way. */
async function fsyncPath(filePath: string, mode?: number): Promise<number> {
  const handle = await fs.open(filePath, "r");
  try {
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

const FILE_MODE = 0o644;

export function createBlobFiles(rootDir: string): BlobFiles {
  const tmpDir = path.join(rootDir, "tmp");
  const objectPath = (version: string) => {
    if (!/^[0-9a-f]{32}$/.test(version)) throw new Error(`Not a blob version id: ${version}`);
    return path.join(rootDir, "objects", version.slice(0, 2), version);
  };

  /** Renames (or links) a synced file into place and makes its new name durable. */
  async function commitFile(fromPath: string, finalPath: string, place: (from: string, to: string) => Promise<void>): Promise<void> {
    await fs.mkdir(path.dirname(finalPath), { recursive: true });
    await place(fromPath, finalPath);
    // The name is durable only once the directory entry is on disk.
    await fsyncPath(path.dirname(finalPath));
  }

  const files: BlobFiles = {
    async write(version, source) {
      const finalPath = objectPath(version);
      const tmpPath = path.join(tmpDir, `${version}.part`);
      await fs.mkdir(tmpDir, { recursive: true });
      const handle = await fs.open(tmpPath, "wx", FILE_MODE);
      try {
        let size = 0;
        try {
          // Awaiting each write is the backpressure: the stream is read as fast as the disk takes it.
          for await (const chunk of Buffer.isBuffer(source) ? [source] : source) {
            // A write may take only part of the chunk (a disk filling up): the rest is written
            // next, which then fails with ENOSPC rather than leaving a truncated blob.
            const bytes = chunk as Uint8Array;
            for (let offset = 0; offset < bytes.byteLength; ) {
              offset += (await handle.write(bytes, offset, bytes.byteLength - offset)).bytesWritten;
            }
            size += bytes.byteLength;
          }
          await handle.sync();
        } finally {
          await handle.close();
        }
        await commitFile(tmpPath, finalPath, fs.rename);
        return size;
      } catch (error) {
        await fs.rm(tmpPath, { force: true });
        throw error;
      }
    },

    async adopt(version, hostPath) {
      const finalPath = objectPath(version);
      const size = await fsyncPath(hostPath, FILE_MODE);
      try {
        await commitFile(hostPath, finalPath, fs.link);
        return size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      }
      return files.write(version, createReadStream(hostPath));
    },

    async open(version) {
      try {
        return openedFile(await openFd(objectPath(version), "r"));
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },

    async remove(version) {
      await fs.rm(objectPath(version), { force: true });
    },
  };
  return files;
}

/** A committed version open for reading. */
export interface BlobFile {
  /** Reads into `buffer` from `position`; answers the bytes read (0 at the end). */
  read(buffer: Buffer, length: number, position: number): Promise<number>;
  /** Closes the file; later calls do nothing. */
  close(): Promise<void>;
}

// Plain descriptors through the callback API rather than `fs/promises` FileHandles: a FileHandle's
// open and close cost about twice the CPU (bench/blob-serve.ts serves a small blob with one of each).
const openFd = promisify(open);
const readFd = promisify(read);
const closeFd = promisify(close);

function openedFile(fd: number): BlobFile {
  let closed: Promise<void> | undefined;
  return {
    read: async (buffer, length, position) => (await readFd(fd, buffer, 0, length, position)).bytesRead,
    close: () => (closed ??= closeFd(fd)),
  };
}

// A descriptor is not closed by the garbage collector as a FileHandle is: a web stream dropped
// without being read to the end or cancelled closes its file when it is collected.
const abandonedStreams = new FinalizationRegistry<BlobFile>((file) => void file.close().catch(() => undefined));

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * A web stream of `range` of an open file, read on demand; closes the file when done,
 * cancelled, failed or dropped.
 */
export function blobFileStream(file: BlobFile, range: ByteRange): ReadableStream<Uint8Array> {
  let position = range.start;
  const finish = () => {
    abandonedStreams.unregister(file);
    return file.close();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const length = Math.min(READ_CHUNK_BYTES, range.end + 1 - position);
          const buffer = length > 0 ? Buffer.allocUnsafe(length) : null;
          const bytesRead = buffer ? await file.read(buffer, length, position) : 0;
          if (!buffer || bytesRead === 0) {
            await finish();
            controller.close();
            return;
          }
          position += bytesRead;
          controller.enqueue(buffer.subarray(0, bytesRead));
        } catch (error) {
          await finish().catch(() => undefined);
          controller.error(error);
        }
      },
      cancel: finish,
    },
    { highWaterMark: 0 },
  );
  abandonedStreams.register(stream, file, file);
  return stream;
}
