/**
 * Screenshot latency per request: a warm browser (one Chromium kept by the pool, a new context
 * per job, mobile + desktop in parallel) against a cold launch per request (launch, the same
 * pair, close), on a local page, in one run.
 * Run: npx tsx bench/screenshots.ts [warmRuns=10] [coldRuns=5]
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { getConfig } from "@/lib/config";
import { createBrowserPool } from "@/lib/screenshots/browser";
import { capturePreview } from "@/lib/screenshots/capture";

// Closing a pool's browser logs a "disconnected" warning per cold run; keep the figures readable.
process.env.LOG_LEVEL ??= "error";

const WARM_RUNS = Number(process.argv[2] ?? 10);
const COLD_RUNS = Number(process.argv[3] ?? 5);
const TIMEOUT_MS = 30_000;

const PAGE = `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;font-family:system-ui;display:flex;flex-direction:column;align-items:center;justify-content:center;min-height:100vh;background:#f4f6fb}
.card{padding:24px;border-radius:16px;background:#fff;box-shadow:0 4px 24px #0002;max-width:320px}</style></head>
<body><div class="card"><h1>Welcome to your app</h1><p>Describe what you want to build and watch it appear here.</p></div></body></html>`;

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `${label.padEnd(34)} n=${String(samples.length).padStart(2)}  median ${at(0.5).toFixed(0).padStart(5)} ms  p90 ${at(0.9).toFixed(0).padStart(5)} ms  min ${sorted[0].toFixed(0).padStart(5)} ms  max ${sorted[sorted.length - 1].toFixed(0).padStart(5)} ms`;
}

async function timed(job: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await job();
  return performance.now() - started;
}

const server = http.createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.end(PAGE);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const chromium = getConfig().CHROMIUM_PATH;

try {
  const warmPool = createBrowserPool(chromium);
  const launch = await timed(() => warmPool.get());
  await capturePreview(await warmPool.get(), url, TIMEOUT_MS); // first job on a fresh browser, not counted
  const warm: number[] = [];
  for (let run = 0; run < WARM_RUNS; run++) warm.push(await timed(async () => capturePreview(await warmPool.get(), url, TIMEOUT_MS)));
  const launches = warmPool.launches;
  await warmPool.close();

  const cold: number[] = [];
  for (let run = 0; run < COLD_RUNS; run++) {
    cold.push(
      await timed(async () => {
        const pool = createBrowserPool(chromium);
        try {
          await capturePreview(await pool.get(), url, TIMEOUT_MS);
        } finally {
          await pool.close();
        }
      }),
    );
  }

  console.log(`Chromium ${chromium}; page ${url}; launch of the warm browser ${launch.toFixed(0)} ms`);
  console.log(summary("warm pair (mobile + desktop)", warm));
  console.log(summary("cold launch + pair + close", cold));
  const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
  console.log(`warm is ${(median(cold) / median(warm)).toFixed(1)}× faster per request; warm pool launched ${launches} browser(s) for ${WARM_RUNS + 1} jobs`);
} finally {
  server.closeAllConnections();
  server.close();
}
