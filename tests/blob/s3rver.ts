import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** A real S3-compatible server (s3rver) on 127.0.0.1 with one bucket, in a child process. */
export interface S3rverHandle {
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
}

export async function startS3rver(bucket = "blobs"): Promise<S3rverHandle> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "s3rver-"));
  const child = fork(fileURLToPath(new URL("./s3rver-process.mjs", import.meta.url)), {
    execArgv: ["--openssl-legacy-provider"],
    env: { ...process.env, S3RVER_DIRECTORY: directory, S3RVER_BUCKET: bucket },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`s3rver exited with code ${code} before listening`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.disconnect();
      await exited;
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
