import { StringDecoder } from "node:string_decoder";
import { log } from "@/lib/log";
import type { OutputListener } from "./port";

/** Turns arbitrary output chunks into whole lines. */
export interface LineSplitter {
  /** Adds a chunk; bytes may split a UTF-8 character, text may split a line. */
  write(chunk: Uint8Array | string): void;
  /** Emits what is left as a last line without `\n` (if anything). */
  end(): void;
}

/** A "line" longer than this is passed on in pieces (e.g. progress bars redrawn with `\r`). */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Buffers output until a line is complete, so listeners never see half a line or half a
 * multi-byte character: processes and the E2B SDK deliver output in arbitrary chunks.
 */
export function createLineSplitter(emit: (line: string) => void): LineSplitter {
  const decoder = new StringDecoder("utf8");
  let pending = "";

  const push = (text: string) => {
    pending += text;
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      emit(pending.slice(0, newline + 1));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf("\n");
    }
    if (pending.length > MAX_LINE_CHARS) {
      emit(pending);
      pending = "";
    }
  };

  return {
    write(chunk) {
      push(typeof chunk === "string" ? chunk : decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    },
    end() {
      push(decoder.end());
      if (pending) emit(pending);
      pending = "";
    },
  };
}

/** Hands a line to a listener; a listener that throws or rejects is logged, never fatal. */
export function deliverLine(listener: OutputListener | undefined, line: string): void {
  if (!listener) return;
  const report = (error: unknown) => log.warn("sandbox output listener failed", { error });
  try {
    void Promise.resolve(listener(line)).catch(report);
  } catch (error) {
    report(error);
  }
}
