import { notFoundResponse } from "@/lib/http";

export const dynamic = "force-dynamic";

/** Any /api path no other route serves: the JSON 404, whatever the method (Next.js would answer HTML). */
const handler = async (request: Request) => notFoundResponse(request);

export { handler as DELETE, handler as GET, handler as HEAD, handler as OPTIONS, handler as PATCH, handler as POST, handler as PUT };
