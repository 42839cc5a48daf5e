import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3BlobStore, DELETE_BATCH_SIZE } from "@/lib/blob/drivers/s3";
import { BlobStoreUnavailableError } from "@/lib/blob/errors";
import { describeBlobContract } from "../contract/blob";
import { startS3rver, type S3rverHandle } from "./s3rver";

// s3rver accepts any well-formed signature made with these.
const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

let s3rver: S3rverHandle;

describeBlobContract(
  "s3 (real s3rver on 127.0.0.1)",
  async () => {
    s3rver = await startS3rver();
    const store = createS3BlobStore({ ...credentials, bucket: s3rver.bucket, region: "us-east-1", endpoint: s3rver.endpoint, forcePathStyle: true });
    return { store, fetchPublic: (url) => fetch(url), cleanup: () => s3rver.stop() };
  },
  {
    additionalTests: (harness) => {
      it("builds path-style public URLs on the endpoint", async () => {
        const put = await harness().store.put("s3-only/url.txt", "x", { access: "public", allowOverwrite: true });
        expect(put.url).toBe(`${s3rver.endpoint}/${s3rver.bucket}/s3-only/url.txt`);
      });
    },
  },
);

/** Forwards requests to s3rver and counts the keys of every DeleteObjects request. */
async function startDeleteCountingProxy(target: string) {
  const deleteBatches: number[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    if (req.method === "POST" && req.url?.includes("?delete")) deleteBatches.push(body.toString().split("<Key>").length - 1);
    const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deleteBatches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("s3 blob driver: wire behaviour", () => {
  let server: S3rverHandle;
  let proxy: Awaited<ReturnType<typeof startDeleteCountingProxy>>;

  beforeAll(async () => {
    server = await startS3rver("wire");
    proxy = await startDeleteCountingProxy(server.endpoint);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  it("deletes in DeleteObjects batches of at most 1000 keys", async () => {
    const store = createS3BlobStore({ ...credentials, bucket: server.bucket, region: "us-east-1", endpoint: proxy.endpoint, forcePathStyle: true });
    const pathnames = Array.from({ length: 2 * DELETE_BATCH_SIZE + 5 }, (_, i) => `gone/${i}.txt`);
    await store.del(pathnames);
    expect(proxy.deleteBatches).toEqual([1000, 1000, 5]);
  });

  it("maps an unreachable store to BlobStoreUnavailableError without leaking credentials", async () => {
    const store = createS3BlobStore({
      accessKeyId: "AKIAEXAMPLEKEY",
      secretAccessKey: "very-secret-key-value",
      bucket: "wire",
      region: "us-east-1",
      endpoint: "http://127.0.0.1:9",
      forcePathStyle: true,
    });
    const failure = await store.list().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BlobStoreUnavailableError);
    expect(String((failure as Error).message)).not.toContain("very-secret-key-value");
  });
});
