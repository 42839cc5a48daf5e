import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { isProcessAlive } from "@/lib/sandbox/drivers/local-os-processes";

/** Claims, shared by every test run on the machine (two clones' runs side by side included). */
const CLAIMS_DIR = path.join(os.tmpdir(), "cbs-test-port-slices");
const FIRST_PORT = 24_000;
/** The emulated deployments' ports (EMULATOR_PORT_RANGE's default), sliced the same way. */
const FIRST_EMULATOR_PORT = 23_000;
const SLICE_SIZE = 100;
const SLICES = 10;

/** The pid text of a claim; empty when it is gone. */
function readClaim(claim: string): string {
  try {
    return fs.readFileSync(claim, "utf8");
  } catch {
    return "";
  }
}

/**
 * A slice of the local sandbox port range held by this test file's process alone: files run side
 * by side, each with its own sandboxes root, so none sees the ports the others reserved, and a
 * reserved port is only listened on seconds later (Metro's start). The same slice of the emulated
 * deployments' ports comes with it: each file has its own store, and a deployment's port freed by
 * a restart must not be taken by another file's new deployment. A claim is a file holding the
 * pid; a dead holder's claim is taken over. Waits while every slice is held.
 */
export async function claimPortSlice(): Promise<{ range: string; emulatorRange: string; release(): void }> {
  fs.mkdirSync(CLAIMS_DIR, { recursive: true });
  for (;;) {
    for (let slot = 0; slot < SLICES; slot++) {
      const claim = path.join(CLAIMS_DIR, `${slot}.pid`);
      try {
        fs.writeFileSync(claim, String(process.pid), { flag: "wx" });
      } catch {
        const holder = Number(readClaim(claim));
        // Holders write their pid at once; an empty claim is one being written.
        if (holder && !(await isProcessAlive(holder))) fs.rmSync(claim, { force: true });
        continue;
      }
      const first = FIRST_PORT + slot * SLICE_SIZE;
      const firstEmulator = FIRST_EMULATOR_PORT + slot * SLICE_SIZE;
      return {
        range: `${first}-${first + SLICE_SIZE - 1}`,
        emulatorRange: `${firstEmulator}-${firstEmulator + SLICE_SIZE - 1}`,
        release: () => {
          if (readClaim(claim) === String(process.pid)) fs.rmSync(claim, { force: true });
        },
      };
    }
    await delay(200);
  }
}
