import { acceptFile, type AcceptedFile, type FormSource, uploadReceiveOptions, withReceivedForm } from "@/lib/assets";
import { type BlobStore, getBlobStore, putBlobFile } from "@/lib/blob";
import type { User } from "@/lib/store/users";

/** The answer of POST /api/upload-image. */
export interface ChatImageResult {
  url: string;
  /** `chat-images/<user_id>/<timestamp>-<filename>` with the store's random suffix. */
  pathname: string;
  contentType: string;
}

/**
 * Stores an accepted image as a chat image (spec 2.9, 4.3): public, at
 * `chat-images/<user_id>/<timestamp>-<filename>` with a random suffix so equal names never
 * collide, with the content type of the verified image format. The file at `file.path` is taken
 * over: it is gone afterwards.
 */
export async function storeChatImage(userId: string, file: AcceptedFile, blobs: BlobStore): Promise<ChatImageResult> {
  const put = await putBlobFile(blobs, `chat-images/${userId}/${Date.now()}-${file.filename}`, file.path, {
    access: "public",
    addRandomSuffix: true,
    contentType: file.contentType,
  });
  return { url: put.url, pathname: put.pathname, contentType: put.contentType };
}

/**
 * POST /api/upload-image: reads the multipart form (`file`), accepts spec 8 image types only
 * (content checked, same 10 MB limit and filename rules as assets; a name without extension
 * takes the one of its content) and stores the chat image.
 */
export function uploadChatImage(form: FormSource, user: User): Promise<ChatImageResult> {
  return withReceivedForm(form, uploadReceiveOptions(), async ({ file }) =>
    storeChatImage(user.id, await acceptFile(file, { kinds: ["image"], inferMissingExtension: true }), getBlobStore()),
  );
}
