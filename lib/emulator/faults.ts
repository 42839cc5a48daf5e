import { z } from "zod";
import { errorBody } from "./http";

/**
 * Fault injection for tests and benchmarks. A rule adds latency, answers an error status (with an
 * upstream-style code such as `OptimisticConcurrencyControlFailure`, `ProjectQuotaReached` or
 * `SSORequired`), or hangs until the caller gives up. Rules are queued on the emulator
 * (`emulator.faults.add`, or `POST /_admin/faults`) or sent per request in `X-Emulator-Fault`;
 * both need the emulator's admin secret over HTTP.
 */
export const faultRuleSchema = z.strictObject({
  /** Substring of the path below the mount or the deployment's root (e.g. `update_environment_variables`); all paths when omitted. */
  path: z.string().min(1).optional(),
  /** Only requests to this API: the management mount or a deployment's listener; both when omitted. */
  api: z.enum(["management", "deployment"]).optional(),
  /** How many matching requests the rule applies to. @default 1 */
  times: z.number().int().positive().optional(),
  /** Delay before answering, in milliseconds. */
  latencyMs: z.number().int().nonnegative().max(600_000).optional(),
  /** Error status to answer instead of handling the request. */
  status: z.number().int().min(400).max(599).optional(),
  /** Upstream error code of the error answer. @default "InternalServerError" (5xx) or "FaultInjected" */
  code: z.string().min(1).max(100).optional(),
  message: z.string().max(500).optional(),
  /** Never answer until the caller aborts (or {@link HANG_LIMIT_MS} passes), to exercise timeouts. */
  hang: z.boolean().optional(),
});

export type FaultRule = z.output<typeof faultRuleSchema>;

/** Upper bound of a hang, so a forgotten rule cannot hold a connection forever. */
export const HANG_LIMIT_MS = 120_000;

/** Queue of pending fault rules of one emulator. */
export class FaultController {
  private rules: { rule: FaultRule; remaining: number }[] = [];

  /** Queues a rule; it applies to the next `times` (default 1) requests whose path matches. */
  add(rule: FaultRule): void {
    this.rules.push({ rule: faultRuleSchema.parse(rule), remaining: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
  }

  /** The first queued rule matching `path` of `api`, consuming one of its uses. */
  take(path: string, api: "management" | "deployment"): FaultRule | undefined {
    const entry = this.rules.find(({ rule }) => (!rule.path || path.includes(rule.path)) && (!rule.api || rule.api === api));
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.rules = this.rules.filter((candidate) => candidate !== entry);
    return entry.rule;
  }
}

/** Waits `ms`, or until `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Applies a rule: returns the error answer to send, or undefined to go on handling the request. */
export async function applyFault(rule: FaultRule, signal: AbortSignal): Promise<Response | undefined> {
  if (rule.latencyMs) await wait(rule.latencyMs, signal);
  if (rule.hang) {
    await wait(HANG_LIMIT_MS, signal);
    return errorBody(504, "GatewayTimeout", "Injected hang ended.");
  }
  if (rule.status) {
    const code = rule.code ?? (rule.status >= 500 ? "InternalServerError" : "FaultInjected");
    return errorBody(rule.status, code, rule.message ?? `Injected fault ${code}.`);
  }
  return undefined;
}
