import type { Sandbox as E2BSandbox, WriteInfo as E2BWriteInfo } from "e2b";
import { InvalidArgumentError } from "../errors";
import type { EntryInfo, EntryType, FileData, SandboxFiles, WriteEntry, WriteInfo } from "../port";
import { callE2B } from "./e2b-errors";

/** Bytes become a fresh ArrayBuffer: the SDK takes ArrayBuffer, not views into shared memory. */
const toSdkData = (data: FileData): string | ArrayBuffer =>
  typeof data === "string" || data instanceof ArrayBuffer ? data : new Uint8Array(data).buffer;

const toWriteInfo = (info: E2BWriteInfo): WriteInfo => ({
  name: info.name,
  path: info.path,
  type: (info.type ?? "file") as EntryType,
});

/** `sandbox.files` over the E2B SDK's `Filesystem`; text stays the default read format. */
export class E2BFiles implements SandboxFiles {
  constructor(private readonly sdk: E2BSandbox) {}

  read(path: string, options?: { format?: "text" }): Promise<string>;
  read(path: string, options: { format: "bytes" }): Promise<Uint8Array>;
  read(path: string, options?: { format?: "text" | "bytes" }): Promise<string | Uint8Array> {
    if (options?.format === "bytes") return callE2B(() => this.sdk.files.read(path, { format: "bytes" }), { path });
    return callE2B(() => this.sdk.files.read(path), { path });
  }

  write(path: string, data: FileData): Promise<WriteInfo>;
  write(entries: WriteEntry[]): Promise<WriteInfo[]>;
  async write(target: string | WriteEntry[], data?: FileData): Promise<WriteInfo | WriteInfo[]> {
    if (Array.isArray(target)) {
      const entries = target.map((entry) => ({ path: entry.path, data: toSdkData(entry.data) }));
      return (await callE2B(() => this.sdk.files.write(entries))).map(toWriteInfo);
    }
    if (data === undefined) throw new InvalidArgumentError("files.write needs data to write.");
    return toWriteInfo(await callE2B(() => this.sdk.files.write(target, toSdkData(data)), { path: target }));
  }

  async list(path: string, options: { depth?: number } = {}): Promise<EntryInfo[]> {
    const entries = await callE2B(() => this.sdk.files.list(path, { depth: options.depth ?? 1 }), { path });
    return entries.map((entry) => ({
      ...toWriteInfo(entry),
      size: entry.size,
      ...(entry.modifiedTime ? { modifiedTime: entry.modifiedTime } : {}),
    }));
  }

  exists(path: string): Promise<boolean> {
    return callE2B(() => this.sdk.files.exists(path), { path });
  }

  makeDir(path: string): Promise<boolean> {
    return callE2B(() => this.sdk.files.makeDir(path), { path });
  }

  remove(path: string): Promise<void> {
    return callE2B(() => this.sdk.files.remove(path), { path });
  }
}
