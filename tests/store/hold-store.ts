/**
 * Holds DATA_DIR's embedded database like a server would, for tests/store/lock.test.ts: opens the
 * store (taking its lock, recording HOLD_BASE_URL as its API), prints "holding", and closes when
 * its stdin ends. Run with `node --import tsx`.
 */
import { closeStore, getStore } from "@/lib/store";

await getStore();
console.log("holding");
process.stdin.resume();
process.stdin.on("end", () => {
  void closeStore().then(() => process.exit(0));
});
