import { GET, HEAD } from "@/app/blob/[...pathname]/route";

/**
 * Requests a blob URL through the Next.js route handler, with the catch-all params Next.js
 * would derive from it (segments after /blob/, percent-decoded).
 */
export async function fetchThroughRoute(url: string, init?: RequestInit): Promise<Response> {
  const segments = new URL(url).pathname.replace(/^\/blob\//, "").split("/").map(decodeURIComponent);
  const handler = init?.method === "HEAD" ? HEAD : GET;
  return handler(new Request(url, init), { params: Promise.resolve({ pathname: segments }) });
}
