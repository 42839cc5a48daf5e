// envd's filesystem service (filesystem.Filesystem). Paths are the sandbox's own: the wall
// decides what this agent can see, so nothing here confines paths.
import { randomUUID } from "node:crypto";
import { watch } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { ConnectError, fsErrorToConnect } from "./connect.mjs";

/** Events a polling watcher (CreateWatcher) keeps until they are fetched. */
const MAX_BUFFERED_EVENTS = 10_000;

const fileType = (stats) => (stats.isSymbolicLink() ? "FILE_TYPE_SYMLINK" : stats.isDirectory() ? "FILE_TYPE_DIRECTORY" : "FILE_TYPE_FILE");

function permissionString(stats) {
  const kind = stats.isSymbolicLink() ? "l" : stats.isDirectory() ? "d" : "-";
  const bits = "rwxrwxrwx";
  return kind + [...bits].map((letter, index) => (stats.mode & (1 << (8 - index)) ? letter : "-")).join("");
}

/** The EntryInfo message of `absolute`, from lstat (a symlink is reported as itself). */
export async function entryInfo(absolute) {
  const stats = await fs.lstat(absolute);
  const entry = {
    name: path.posix.basename(absolute),
    type: fileType(stats),
    path: absolute,
    size: String(stats.size),
    mode: stats.mode & 0o7777,
    permissions: permissionString(stats),
    owner: String(stats.uid),
    group: String(stats.gid),
    modifiedTime: stats.mtime.toISOString(),
  };
  if (stats.isSymbolicLink()) entry.symlinkTarget = await fs.readlink(absolute).catch(() => "");
  return entry;
}

/** Resolves a request path the way envd does: relative paths start at the user's home. */
export const resolvePath = (home, requested) => {
  if (typeof requested !== "string" || requested.includes("\0")) throw new ConnectError("invalid_argument", "invalid path");
  return path.posix.resolve(home, requested.startsWith("~/") ? requested.slice(2) : requested);
};

async function listEntries(directory, depth) {
  const names = await fs.readdir(directory);
  const entries = [];
  for (const name of names.sort()) {
    const absolute = path.posix.join(directory, name);
    const entry = await entryInfo(absolute).catch(() => null);
    if (!entry) continue; // removed meanwhile
    entries.push(entry);
    if (depth > 1 && entry.type === "FILE_TYPE_DIRECTORY") entries.push(...(await listEntries(absolute, depth - 1).catch(() => [])));
  }
  return entries;
}

const EVENT_TYPE = { create: "EVENT_TYPE_CREATE", write: "EVENT_TYPE_WRITE", remove: "EVENT_TYPE_REMOVE" };

/**
 * Watches `directory` and calls `onEvent` with FilesystemEvent messages (names relative to it).
 * Node reports "rename" for creation and removal alike: the entry's existence tells them apart.
 */
async function watchDirectory(directory, recursive, onEvent) {
  const stats = await fs.stat(directory).catch((error) => {
    throw fsErrorToConnect(error, directory);
  });
  if (!stats.isDirectory()) throw new ConnectError("invalid_argument", `not a directory: ${directory}`);
  const watcher = watch(directory, { recursive }, (kind, filename) => {
    if (!filename) return;
    const name = filename.toString();
    if (kind === "change") {
      onEvent({ name, type: EVENT_TYPE.write });
      return;
    }
    fs.lstat(path.posix.join(directory, name)).then(
      () => onEvent({ name, type: EVENT_TYPE.create }),
      () => onEvent({ name, type: EVENT_TYPE.remove }),
    );
  });
  watcher.on("error", () => watcher.close());
  return watcher;
}

export function createFilesystemService({ home }) {
  /** Polling watchers: id → { watcher, events } */
  const watchers = new Map();
  const pathOf = (request, field = "path") => resolvePath(home, request[field]);
  const withFsErrors = async (target, operation) => {
    try {
      return await operation();
    } catch (error) {
      throw error instanceof ConnectError ? error : fsErrorToConnect(error, target);
    }
  };

  return {
    closeAll() {
      for (const { watcher } of watchers.values()) watcher.close();
      watchers.clear();
    },
    methods: {
      "/filesystem.Filesystem/Stat": {
        kind: "unary",
        handler: async (request) => {
          const target = pathOf(request);
          return withFsErrors(target, async () => ({ entry: await entryInfo(target) }));
        },
      },
      "/filesystem.Filesystem/MakeDir": {
        kind: "unary",
        handler: async (request) => {
          const target = pathOf(request);
          return withFsErrors(target, async () => {
            const existing = await fs.stat(target).catch(() => null);
            if (existing?.isDirectory()) throw new ConnectError("already_exists", `directory already exists: ${target}`);
            if (existing) throw new ConnectError("invalid_argument", `path exists and is not a directory: ${target}`);
            await fs.mkdir(target, { recursive: true });
            return { entry: await entryInfo(target) };
          });
        },
      },
      "/filesystem.Filesystem/Move": {
        kind: "unary",
        handler: async (request) => {
          const source = pathOf(request, "source");
          const destination = pathOf(request, "destination");
          return withFsErrors(source, async () => {
            await fs.mkdir(path.posix.dirname(destination), { recursive: true });
            await fs.rename(source, destination);
            return { entry: await entryInfo(destination) };
          });
        },
      },
      "/filesystem.Filesystem/ListDir": {
        kind: "unary",
        handler: async (request) => {
          const target = pathOf(request);
          const depth = Math.max(1, Number(request.depth ?? 1) || 1);
          return withFsErrors(target, async () => {
            const stats = await fs.stat(target);
            if (!stats.isDirectory()) throw new ConnectError("invalid_argument", `not a directory: ${target}`);
            return { entries: await listEntries(target, depth) };
          });
        },
      },
      "/filesystem.Filesystem/Remove": {
        kind: "unary",
        handler: async (request) => {
          const target = pathOf(request);
          return withFsErrors(target, async () => {
            await fs.rm(target, { recursive: true, force: true });
            return {};
          });
        },
      },
      "/filesystem.Filesystem/WatchDir": {
        kind: "server",
        handler: async (request, stream) => {
          const target = pathOf(request);
          const watcher = await watchDirectory(target, Boolean(request.recursive), (event) => stream.send({ filesystem: event }));
          stream.send({ start: {} });
          await stream.closed;
          watcher.close();
          stream.end();
        },
      },
      "/filesystem.Filesystem/CreateWatcher": {
        kind: "unary",
        handler: async (request) => {
          const target = pathOf(request);
          const id = randomUUID();
          const events = [];
          const watcher = await watchDirectory(target, Boolean(request.recursive), (event) => {
            if (events.length < MAX_BUFFERED_EVENTS) events.push(event);
          });
          watchers.set(id, { watcher, events });
          return { watcherId: id };
        },
      },
      "/filesystem.Filesystem/GetWatcherEvents": {
        kind: "unary",
        handler: async (request) => {
          const entry = watchers.get(request.watcherId);
          if (!entry) throw new ConnectError("not_found", `watcher ${request.watcherId} not found`);
          return { events: entry.events.splice(0) };
        },
      },
      "/filesystem.Filesystem/RemoveWatcher": {
        kind: "unary",
        handler: async (request) => {
          const entry = watchers.get(request.watcherId);
          if (!entry) throw new ConnectError("not_found", `watcher ${request.watcherId} not found`);
          entry.watcher.close();
          watchers.delete(request.watcherId);
          return {};
        },
      },
    },
  };
}
