import type { IncomingMessage } from "node:http";
import { formSourceOfNodeRequest, uploadAsset, type FormSource } from "@/lib/assets";
import { requireUser } from "@/lib/auth";
import { blobFastPath } from "@/lib/blob/fast-path";
import { errorResponse, type FastPath, installFastPaths, requestHeadOf, writeResponse } from "@/lib/http";
import { uploadChatImage } from "@/lib/images";
import type { User } from "@/lib/store/users";
import { openProjectSandbox } from "@/lib/workspace";

/** What the upload routes do once the caller is known; the routes make the same calls. */
const UPLOADS: Record<string, (form: FormSource, user: User) => Promise<unknown>> = {
  "/api/assets/upload": (form, user) => uploadAsset(form, user, openProjectSandbox),
  "/api/upload-image": (form, user) => uploadChatImage(form, user),
};

async function answerUpload(request: IncomingMessage, upload: (form: FormSource, user: User) => Promise<unknown>): Promise<Response> {
  try {
    const head = requestHeadOf(request);
    // Authenticate before reading a byte of the body, as the routes do.
    const user = await requireUser(head);
    return Response.json(await upload(formSourceOfNodeRequest(request, head.headers), user));
  } catch (error) {
    return errorResponse(error);
  }
}

/**
 * POST to the upload routes without Next.js: the body goes from the socket to the multipart parser
 * as a Node stream. Next.js hands a route the body as a web stream, and converting it back costs
 * more than a third of an upload's time (bench/upload.ts). Other methods go to the routes (405).
 */
export const uploadFastPath: FastPath = (request, response) => {
  if (request.method !== "POST") return false;
  const url = request.url ?? "";
  const queryAt = url.indexOf("?");
  const upload = UPLOADS[queryAt === -1 ? url : url.slice(0, queryAt)];
  if (!upload) return false;
  void answerUpload(request, upload).then((answer) => writeResponse(request, response, answer)).catch((error: unknown) => response.destroy(error as Error));
  return true;
};

/** Hands the custom server its fast paths: public blob reads, then uploads. */
export function installServerFastPaths(): void {
  installFastPaths([blobFastPath, uploadFastPath]);
}
