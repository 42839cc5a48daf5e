import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const SERVICE_INSTANCE = path.join(import.meta.dirname, "service-instance.ts");

/** An app instance in a process of its own (service-instance.ts). */
export interface ServiceInstance {
  child: ChildProcess;
  baseUrl: string;
  /** Everything it printed so far. */
  output(): string;
  /** Its exit code once it exited (null when a signal ended it). */
  exited: Promise<number | null>;
}

/**
 * Starts an instance with this process's environment plus `env` (DATABASE_URL, INSTANCE_ID …);
 * resolves once it serves.
 */
export async function startServiceInstance(env: Record<string, string>): Promise<ServiceInstance> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVICE_INSTANCE], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /READY (\S+)/.exec(output);
      if (ready) resolve(ready[1]);
    };
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    void exited.then((code) => reject(new Error(`The instance exited (${code}) before it served:\n${output}`)));
  });
  return { child, baseUrl, output: () => output, exited };
}
