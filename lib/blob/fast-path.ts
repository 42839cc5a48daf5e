import { errorResponse, type FastPath, writeResponse } from "@/lib/http";
import { getBlobStore } from "./index";
import { sendBlob } from "./serve";

const BLOB_PREFIX = "/blob/";

/**
 * The pathname of a blob URL the fast path takes, as the route's catch-all would receive it
 * (segments percent-decoded, joined by `/`); null for what is left to Next.js: other paths,
 * paths it would redirect (a trailing or doubled slash) or answer 400 (malformed escapes, see proxy.ts).
 */
export function fastBlobPathname(urlPath: string): string | null {
  if (!urlPath.startsWith(BLOB_PREFIX)) return null;
  const rest = urlPath.slice(BLOB_PREFIX.length);
  if (rest === "" || rest.endsWith("/") || rest.includes("//") || /(^|\/)\.\.?(\/|$)/.test(rest)) return null;
  try {
    return rest.split("/").map(decodeURIComponent).join("/");
  } catch {
    return null;
  }
}

/**
 * Answers GET and HEAD of public fs-driver blobs without Next.js: its request handling costs
 * several times the file read for small files, and its response path drops Content-Length.
 * Same answers as `app/blob/[...pathname]/route.ts` (both go through `lib/blob/serve.ts`).
 */
export const blobFastPath: FastPath = (request, response) => {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const url = request.url ?? "";
  const queryAt = url.indexOf("?");
  const pathname = fastBlobPathname(queryAt === -1 ? url : url.slice(0, queryAt));
  if (pathname === null) return false;
  const download = queryAt !== -1 && new URLSearchParams(url.slice(queryAt + 1)).get("download") === "1";
  sendBlob(request, response, getBlobStore(), pathname, download).catch(async (error: unknown) => {
    if (response.headersSent) {
      response.destroy(error as Error);
      return;
    }
    await writeResponse(request, response, errorResponse(error));
  });
  return true;
};
