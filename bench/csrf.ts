/**
 * Cost of the CSRF check (lib/auth/csrf.ts) that every cookie-authenticated request pays: the
 * check alone, and the check plus looking up the dashboard origin of PUBLIC_BASE_URL as
 * authenticate() does. Timed in batches (a single call is below the clock's resolution); prints
 * p50/p99 per call, in nanoseconds.
 * Run: npx tsx bench/csrf.ts [batches] [callsPerBatch]
 */
import { isSameOriginRequest, originOf } from "@/lib/auth/csrf";

const batches = Number(process.argv[2] ?? 2_000);
const callsPerBatch = Number(process.argv[3] ?? 1_000);
const PUBLIC_BASE_URL = "http://localhost:3000";
const ORIGIN = new URL(PUBLIC_BASE_URL).origin;

const requests = {
  "same-origin POST (Origin)": new Request(`${PUBLIC_BASE_URL}/api/projects`, { method: "POST", headers: { origin: ORIGIN, cookie: "cbs_session=x" } }),
  "same-origin POST (Sec-Fetch-Site)": new Request(`${PUBLIC_BASE_URL}/api/projects`, { method: "POST", headers: { "sec-fetch-site": "same-origin" } }),
  "cross-site POST": new Request(`${PUBLIC_BASE_URL}/api/projects`, { method: "POST", headers: { origin: "http://localhost:41000", "sec-fetch-site": "same-site" } }),
  "GET (always allowed)": new Request(`${PUBLIC_BASE_URL}/api/projects`),
};

function measure(name: string, check: () => boolean): void {
  const perCall: number[] = [];
  let accepted = 0;
  for (let batch = 0; batch < batches; batch += 1) {
    const started = process.hrtime.bigint();
    for (let call = 0; call < callsPerBatch; call += 1) if (check()) accepted += 1;
    perCall.push(Number(process.hrtime.bigint() - started) / callsPerBatch);
  }
  perCall.sort((a, b) => a - b);
  const at = (q: number) => perCall[Math.min(perCall.length - 1, Math.floor(q * perCall.length))];
  console.log(`${name.padEnd(68)} p50 ${at(0.5).toFixed(0).padStart(5)} ns  p99 ${at(0.99).toFixed(0).padStart(5)} ns  (${accepted > 0 ? "accepted" : "refused"})`);
}

console.log(`CSRF check, ${batches} batches × ${callsPerBatch} calls, node ${process.version}`);
for (const [name, request] of Object.entries(requests)) {
  // Warm-up, so the JIT has settled before the measured batches.
  for (let call = 0; call < 100_000; call += 1) isSameOriginRequest(request, ORIGIN);
  measure(`check: ${name}`, () => isSameOriginRequest(request, ORIGIN));
  measure(`check + originOf(PUBLIC_BASE_URL): ${name}`, () => isSameOriginRequest(request, originOf(PUBLIC_BASE_URL)));
}
