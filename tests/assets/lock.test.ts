import { describe, expect, it } from "vitest";
import { createKeyedLock } from "@/lib/assets";
import type { Sql } from "@/lib/store";

// The in-process queue alone: a PGlite-kind store needs no database lock (postgres test: manifest-postgres).
const embeddedStore = async () => ({ kind: "pglite" }) as Sql;

/** A promise with its resolve function, to hold a critical section open until the test says. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("createKeyedLock in one process", () => {
  it("runs sections of one key one after another, in call order", async () => {
    const lock = createKeyedLock(embeddedStore, "test");
    const events: string[] = [];
    const first = gate();
    const started = gate();
    const runs = [
      lock.run("p", async () => {
        events.push("1 start");
        started.open();
        await first.opened;
        events.push("1 end");
      }),
      lock.run("p", async () => {
        events.push("2 start");
        events.push("2 end");
      }),
      lock.run("p", async () => {
        events.push("3");
        throw new Error("section 3 failed");
      }),
      lock.run("p", async () => events.push("4")),
    ];
    await started.opened;
    // Unqueued, section 2 would have started within these ticks.
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(["1 start"]);
    first.open();
    const outcomes = await Promise.allSettled(runs);
    expect(events).toEqual(["1 start", "1 end", "2 start", "2 end", "3", "4"]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  });

  it("lets different keys run at the same time", async () => {
    const lock = createKeyedLock(embeddedStore, "test");
    const held = gate();
    const a = lock.run("a", () => held.opened.then(() => "a"));
    // Finishes while "a" is still held: keys do not wait for each other.
    expect(await lock.run("b", async () => "b")).toBe("b");
    held.open();
    expect(await a).toBe("a");
  });
});
