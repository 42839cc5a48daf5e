import { afterAll, beforeAll, expect, it } from "vitest";
import { createVercelBlobStore } from "@/lib/blob/drivers/vercel";
import { BlobAlreadyExistsError, BlobRateLimitedError, BlobStoreUnavailableError } from "@/lib/blob/errors";
import { describeBlobContract } from "../contract/blob";
import { startVercelBlobDouble, type VercelBlobDouble } from "./vercel-blob-double";

let double: VercelBlobDouble;
const savedEnv = { api: process.env.VERCEL_BLOB_API_URL, retries: process.env.VERCEL_BLOB_RETRIES };

beforeAll(() => {
  // The SDK's default is 10 retries with exponential backoff from 1 s (minutes in all).
  process.env.VERCEL_BLOB_RETRIES = "0";
});
afterAll(() => {
  process.env.VERCEL_BLOB_API_URL = savedEnv.api;
  process.env.VERCEL_BLOB_RETRIES = savedEnv.retries;
});

describeBlobContract(
  "vercel (real @vercel/blob SDK against a local API double)",
  async () => {
    double = await startVercelBlobDouble();
    process.env.VERCEL_BLOB_API_URL = double.apiUrl;
    return { store: createVercelBlobStore({ token: double.token }), fetchPublic: (url) => fetch(url), cleanup: () => double.close() };
  },
  {
    additionalTests: (harness) => {
      it("maps the service's overwrite refusal to BlobAlreadyExistsError", async () => {
        const store = harness().store;
        await store.put("vercel-only/fixed.png", "1", { access: "public", allowOverwrite: true });
        const failure = await store.put("vercel-only/fixed.png", "2", { access: "public" }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(BlobAlreadyExistsError);
        expect((failure as BlobAlreadyExistsError).pathname).toBe("vercel-only/fixed.png");
      });

      it("maps rate_limited to BlobRateLimitedError with the Retry-After hint", async () => {
        double.failNext({ status: 429, code: "rate_limited", retryAfterSeconds: 7 });
        const failure = await harness().store.list().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(BlobRateLimitedError);
        expect(failure).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 7 });
      });

      it("maps other service failures to BlobStoreUnavailableError", async () => {
        double.failNext({ status: 503, code: "service_unavailable" });
        await expect(harness().store.head("vercel-only/any.txt")).rejects.toBeInstanceOf(BlobStoreUnavailableError);
        double.failNext({ status: 403, code: "forbidden" });
        await expect(harness().store.put("vercel-only/any.txt", "x", { access: "public" })).rejects.toMatchObject({
          name: "BlobStoreUnavailableError",
          status: 502,
        });
      });

      it("tells the service's refusals apart by the SDK's error classes", async () => {
        double.failNext({ status: 403, code: "store_suspended" });
        await expect(harness().store.list()).rejects.toMatchObject({
          name: "BlobStoreUnavailableError",
          message: "The Vercel Blob store is suspended.",
        });
        double.failNext({ status: 400, code: "file_too_large", message: "the file length cannot be greater than 5 MB" });
        await expect(harness().store.put("vercel-only/big.bin", "x", { access: "public" })).rejects.toMatchObject({
          name: "BlobOptionsError",
          status: 400,
        });
      });

      it("never puts the token in an error message", async () => {
        const store = createVercelBlobStore({ token: "vercel_blob_rw_localdouble12345_wrongsecretvalue" });
        const failure = await store.list().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(BlobStoreUnavailableError);
        expect((failure as Error).message).not.toContain("wrongsecretvalue");
      });
    },
  },
);
