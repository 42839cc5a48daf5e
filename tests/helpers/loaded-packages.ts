import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { parseConfig } from "@/lib/config";

/**
 * Run with `node --import tsx`: imports the ports of the default setup (memory realtime, PGlite
 * store, fs blobs, local sandboxes), builds their default drivers, then chooses the redis realtime
 * driver, and prints as JSON the packages loaded after each step. Packages are seen two ways: ESM
 * imports through a resolve hook, CommonJS `require`s (which Node 20's hooks do not see) in
 * require.cache.
 */
const { port1, port2 } = new MessageChannel();
const resolvedUrls = new Set<string>();
let flushed: ((url: string) => void) | undefined;
port1.on("message", (url: string) => {
  resolvedUrls.add(url);
  flushed?.(url);
});
register(new URL("./resolve-reporter.mjs", import.meta.url), { data: { port: port2 }, transferList: [port2] });

let step = 0;

/** The packages loaded so far: a marker import is resolved last, so its message follows every earlier one. */
async function loadedPackages(): Promise<string[]> {
  const marker = `data:text/javascript,export default ${++step}`;
  const arrived = new Promise<void>((resolve) => (flushed = (url) => url === marker && resolve()));
  await import(marker);
  await arrived;
  const files = [...resolvedUrls, ...Object.keys(createRequire(import.meta.url).cache)];
  const names = files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name) => name !== undefined);
  return [...new Set(names)].sort();
}

const { createRealtime } = await import("@/lib/realtime");
const { createBlobStore } = await import("@/lib/blob");
await import("@/lib/store");
await import("@/lib/sandbox");
const defaults = parseConfig({ DATA_DIR: process.argv[2] });
await createRealtime(defaults).close?.();
createBlobStore(defaults);
const defaultSetup = await loadedPackages();

// Nothing listens on port 1: the driver loads its SDK, and closing drops the connections still trying.
await createRealtime(parseConfig({ DATA_DIR: process.argv[2], REALTIME_DRIVER: "redis", REDIS_URL: "redis://127.0.0.1:1" })).close?.();
const redisChosen = await loadedPackages();

port1.close();
console.log(JSON.stringify({ defaultSetup, redisChosen }));
