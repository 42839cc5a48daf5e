/**
 * The product's sandbox port on the e2b driver (real SDK) against the local sandbox service
 * (packages/sandbox-local), beside the local driver as it is today, in the same run: sandbox
 * create (empty), a command round trip (`echo`), a 10 MB file write and read.
 * Run: npx tsx bench/sandbox-service.ts [iterations]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-sandbox-service-"));
process.env.DATA_DIR = dataDir;
process.env.LOG_LEVEL = "silent";

const { createE2BSandboxProvider } = await import("@/lib/sandbox/drivers/e2b");
const { createLocalSandboxProvider } = await import("@/lib/sandbox/drivers/local");
const { startSandboxService } = await import("../tests/helpers/sandbox-service");
type SandboxProvider = import("@/lib/sandbox").SandboxProvider;

const iterations = Number(process.argv[2] ?? 10);
const TEN_MB = new Uint8Array(10 * 1024 * 1024).map((_, index) => index % 251);

function summarize(name: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  console.log(`  ${name.padEnd(22)} n=${samples.length}  mean ${mean.toFixed(1)} ms  p50 ${at(0.5).toFixed(1)} ms  p95 ${at(0.95).toFixed(1)} ms`);
}

async function time<T>(samples: number[], run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await run();
  samples.push(performance.now() - started);
  return result;
}

async function measure(name: string, provider: SandboxProvider): Promise<void> {
  const create: number[] = [];
  const echo: number[] = [];
  const write: number[] = [];
  const read: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < iterations; index++) {
    const sandbox = await time(create, () => provider.create());
    for (let round = 0; round < 5; round++) await time(echo, () => sandbox.commands.run("echo hi"));
    await time(write, () => sandbox.files.write("/home/user/ten.bin", TEN_MB));
    await time(read, () => sandbox.files.read("/home/user/ten.bin", { format: "bytes" }));
    await provider.kill(sandbox.sandboxId);
  }
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`${name} (this process's CPU: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms)`);
  summarize("create", create);
  summarize("echo round trip", echo);
  summarize("10 MB write", write);
  summarize("10 MB read", read);
}

const service = await startSandboxService(path.join(dataDir, "service"));
try {
  await measure("local driver (today)", createLocalSandboxProvider({ root: path.join(dataDir, "local") }));
  await measure("e2b driver → local sandbox service", createE2BSandboxProvider({ apiKey: service.apiKey, apiUrl: service.url, sandboxUrl: service.url }));
} finally {
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
