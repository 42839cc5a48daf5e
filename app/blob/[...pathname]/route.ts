import { getBlobStore } from "@/lib/blob";
import { serveBlob } from "@/lib/blob/serve";
import { route } from "@/lib/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

type Context = { params: Promise<{ pathname: string[] }> };

/** Public, unauthenticated reads of fs-driver blobs at `<PUBLIC_BASE_URL>/blob/<pathname>`. */
const handler = route<Context>(async (request, { params }) =>
  serveBlob(request, getBlobStore(), (await params).pathname.join("/")),
);

export { handler as GET, handler as HEAD };
