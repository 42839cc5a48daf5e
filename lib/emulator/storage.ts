import crypto from "node:crypto";
import { z } from "zod";
import { listAllBlobs, type BlobStore } from "@/lib/blob";
import { serveBlob } from "@/lib/blob/serve";
import type { SqlExecutor } from "@/lib/store";
import type { EmulatorContext } from "./context";
import { EmulatorError, randomSecret, readQuery } from "./http";
import { deploymentUrlForPort } from "./listeners";
import { consumeUploadToken, deleteUploadTokensBefore, findDocument, insertUploadToken, listStorageDocuments, type EmulatorDeployment } from "./store";

/**
 * File storage of emulated deployments, as Convex serves it: `ctx.storage.generateUploadUrl()`
 * hands out `<deployment>/api/storage/upload?token=…` (single use, valid an hour), a POST of the
 * bytes there answers `{ storageId }` and adds a `_storage` document (sha256, size, contentType),
 * `ctx.storage.getUrl(id)` is `<deployment>/api/storage/<id>`, served with Range, ETag and 304.
 * The bytes live in the product's blob store, one blob per content and type under the
 * deployment's prefix, at a pathname keyed by the installation's secret: nobody who does not hold
 * a storage id finds them. A blob goes when no `_storage` document names it any more.
 */

/** How long an upload URL can be used (upstream `STORE_FILE_AUTHORIZATION_VALIDITY`). */
export const UPLOAD_URL_VALIDITY_MS = 60 * 60 * 1000;

const STORAGE_PREFIX = "emulator-storage";
/** convex-test's ids end with their table's name. */
const STORAGE_ID = /^\d+_storage$/;

/** A stored file as its `_storage` document describes it; sha256 is base64, as Convex's. */
export interface StoredFile {
  sha256: string;
  size: number;
  contentType: string | null;
}

/** The file fields of a `_storage` document. */
function storedFile(document: unknown): StoredFile {
  const { sha256, size, contentType } = document as { sha256: string; size: number; contentType?: string };
  return { sha256, size, contentType: contentType ?? null };
}

/** Browsers upload from the app's origin and show files on any page. */
const CORS_HEADERS = { "access-control-allow-origin": "*" };

export class DeploymentFiles {
  /** Per deployment: the store or sweep running now (a sweep must not see a blob whose document is not written yet). */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly blobs: () => BlobStore,
    /** Keys the blobs' pathnames. */
    private readonly pathKey: Buffer,
  ) {}

  /** Where a file's bytes are: one blob per deployment, content and type. */
  pathname(deploymentName: string, file: StoredFile): string {
    const name = crypto.createHmac("sha256", this.pathKey).update(`${deploymentName}\n${file.sha256}\n${file.contentType ?? ""}`).digest("hex");
    return `${STORAGE_PREFIX}/${deploymentName}/${name}`;
  }

  /** Runs after whatever store or sweep of the deployment runs now. */
  private exclusive<T>(deploymentName: string, run: () => Promise<T>): Promise<T> {
    const result = (this.busy.get(deploymentName) ?? Promise.resolve()).then(run);
    const settled = result.catch(() => undefined);
    this.busy.set(deploymentName, settled);
    void settled.then(() => this.busy.get(deploymentName) === settled && this.busy.delete(deploymentName));
    return result;
  }

  /** A new upload URL of the deployment (`ctx.storage.generateUploadUrl()`). */
  async uploadUrl(db: SqlExecutor, deployment: EmulatorDeployment, now: Date): Promise<string> {
    if (deployment.port === null) throw new Error(`Deployment ${deployment.name} has no listener.`);
    const token = randomSecret();
    await deleteUploadTokensBefore(db, new Date(now.getTime() - UPLOAD_URL_VALIDITY_MS));
    await insertUploadToken(db, deployment.name, token, now);
    return `${deploymentUrlForPort(deployment.port)}/api/storage/upload?token=${token}`;
  }

  /** Stores the bytes, then their `_storage` document through `insert`; the document's id. */
  store(deploymentName: string, bytes: Uint8Array, contentType: string | null, insert: (file: StoredFile) => Promise<string>): Promise<string> {
    const file: StoredFile = { sha256: crypto.createHash("sha256").update(bytes).digest("base64"), size: bytes.byteLength, contentType };
    return this.exclusive(deploymentName, async () => {
      await this.write(deploymentName, file, bytes);
      return insert(file);
    });
  }

  /** Puts files' bytes, then writes the documents that name them (an import), with no sweep between. */
  storeAll(deploymentName: string, files: readonly { file: StoredFile; bytes: Uint8Array }[], writeDocuments: () => Promise<void>): Promise<void> {
    return this.exclusive(deploymentName, async () => {
      for (const { file, bytes } of files) await this.write(deploymentName, file, bytes);
      await writeDocuments();
    });
  }

  /** Puts a file's bytes where its `_storage` document finds them (before the document is written). */
  private async write(deploymentName: string, file: StoredFile, bytes: Uint8Array): Promise<void> {
    await this.blobs().put(this.pathname(deploymentName, file), bytes, { access: "public", allowOverwrite: true, contentType: file.contentType ?? "application/octet-stream" });
  }

  /** A stored file's bytes (`ctx.storage.get` in actions); null when its blob is gone. */
  async read(deploymentName: string, file: StoredFile): Promise<Uint8Array | null> {
    const found = await this.blobs().get(this.pathname(deploymentName, file));
    return found ? new Uint8Array(await new Response(found.stream).arrayBuffer()) : null;
  }

  /** Deletes the deployment's blobs that no `_storage` document names (after deletes). */
  sweep(db: SqlExecutor, deploymentName: string): Promise<void> {
    return this.exclusive(deploymentName, async () => {
      const named = new Set((await listStorageDocuments(db, deploymentName)).map((document) => this.pathname(deploymentName, storedFile(document))));
      const unused = (await listAllBlobs(this.blobs(), `${STORAGE_PREFIX}/${deploymentName}/`)).map((blob) => blob.pathname).filter((pathname) => !named.has(pathname));
      if (unused.length > 0) await this.blobs().del(unused);
    });
  }

  /** GET/HEAD of a file's URL: a store that serves its own blobs (`open`: the fs driver) serves the bytes here; other stores' own URLs do (a redirect). */
  async serve(request: Request, db: SqlExecutor, deploymentName: string, storageId: string): Promise<Response> {
    const document = STORAGE_ID.test(storageId) ? await findDocument(db, deploymentName, storageId) : null;
    if (!document) throw new EmulatorError(404, "FileNotFound", `File ${storageId.slice(0, 100)} not found`);
    const pathname = this.pathname(deploymentName, storedFile(document));
    const store = this.blobs();
    if (!store.open) {
      const head = await store.head(pathname);
      if (!head) throw new EmulatorError(404, "FileNotFound", `File ${storageId} not found`);
      return new Response(null, { status: 302, headers: { ...CORS_HEADERS, location: head.url } });
    }
    const response = await serveBlob(request, store, pathname);
    const headers = new Headers(response.headers);
    headers.set("access-control-allow-origin", "*");
    return new Response(response.body, { status: response.status, headers });
  }
}

const uploadQuery = z.object({ token: z.string().min(1) });

/** `POST /api/storage/upload?token=…`: the bytes become a file; `{ storageId }`. */
export async function uploadFile(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const { token } = readQuery(request, uploadQuery);
  // Upstream's wording: a token it cannot decode, and one past its validity.
  const issuedAt = await consumeUploadToken(context.db, deployment.name, token);
  if (!issuedAt) throw new EmulatorError(401, "StorageTokenInvalid", "Couldn't decode the StoreFileAuthorization token");
  if (issuedAt.getTime() + UPLOAD_URL_VALIDITY_MS <= context.now().getTime()) throw new EmulatorError(401, "StorageTokenExpired", "Store File Authorization expired");
  const bytes = new Uint8Array(await request.arrayBuffer());
  const storageId = await context.runtimes.storeFile(context, deployment, bytes, request.headers.get("content-type") || null);
  return Response.json({ storageId }, { headers: CORS_HEADERS });
}

/** `OPTIONS /api/storage/upload`: the preflight of a browser's upload with its file's content type. */
export async function allowUploadCors(): Promise<Response> {
  return new Response(null, {
    status: 204,
    headers: { ...CORS_HEADERS, "access-control-allow-methods": "POST, OPTIONS", "access-control-allow-headers": "content-type, digest", "access-control-max-age": "86400" },
  });
}

/** `GET /api/storage/<id>`: the file's bytes. */
export async function serveFile(request: Request, context: EmulatorContext, deployment: EmulatorDeployment): Promise<Response> {
  const storageId = decodeURIComponent(new URL(request.url).pathname.slice("/api/storage/".length));
  return context.files.serve(request, context.db, deployment.name, storageId);
}
