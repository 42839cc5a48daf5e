import { EventEmitter } from "node:events";

/**
 * The recent function executions of each deployment, as `/api/stream_function_logs` answers them
 * (the `FunctionExecutionJson` completions the CLI's `convex dev` and `convex logs` print). Kept in
 * memory, the last {@link KEPT_EXECUTIONS} per deployment, like the backend's log stream.
 */

/** One console line of a function, as the worker reports it. */
export interface LogLine {
  level: "LOG" | "INFO" | "WARN" | "ERROR" | "DEBUG";
  messages: string[];
  /** Milliseconds since the epoch. */
  timestamp: number;
}

export interface FunctionExecution {
  kind: "Completion";
  udfType: "Query" | "Mutation" | "Action" | "HttpAction";
  identifier: string;
  logLines: (LogLine & { isTruncated: false })[];
  /** Seconds since the epoch, when it finished. */
  timestamp: number;
  /** Seconds. */
  executionTime: number;
  error: string | null;
  cachedResult: false;
  caller: string;
  requestId: string;
  executionId: string;
  environment: "isolate";
  identityType: string;
}

const KEPT_EXECUTIONS = 1_000;

/** The client-facing form of a log line: `[LOG] 'text'`. */
export function formatLogLine(line: LogLine): string {
  return `[${line.level}] ${line.messages.join(" ")}`;
}

export class FunctionLogs {
  private readonly executions = new Map<string, FunctionExecution[]>();
  private readonly recorded = new EventEmitter().setMaxListeners(0);

  record(deploymentName: string, execution: FunctionExecution): void {
    const kept = this.executions.get(deploymentName) ?? [];
    // Timestamps are the cursor: strictly increasing, so two executions in one millisecond are both streamed.
    const previous = kept.at(-1)?.timestamp ?? 0;
    kept.push({ ...execution, timestamp: Math.max(execution.timestamp, previous + 1e-6) });
    if (kept.length > KEPT_EXECUTIONS) kept.splice(0, kept.length - KEPT_EXECUTIONS);
    this.executions.set(deploymentName, kept);
    this.recorded.emit(deploymentName);
  }

  /** Executions that finished after `cursorMs`; when there are none, waits for one up to `waitMs` (long poll). */
  async after(deploymentName: string, cursorMs: number, waitMs: number, signal?: AbortSignal): Promise<{ entries: FunctionExecution[]; newCursor: number }> {
    const newer = () => (this.executions.get(deploymentName) ?? []).filter((execution) => execution.timestamp * 1000 > cursorMs);
    if (newer().length === 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.recorded.off(deploymentName, done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        this.recorded.on(deploymentName, done);
        signal?.addEventListener("abort", done);
      });
    }
    const entries = newer();
    const latest = this.executions.get(deploymentName)?.at(-1);
    return { entries, newCursor: entries.length > 0 ? entries.at(-1)!.timestamp * 1000 : Math.max(cursorMs, latest ? latest.timestamp * 1000 : 0) };
  }

  forget(deploymentName: string): void {
    this.executions.delete(deploymentName);
  }
}
