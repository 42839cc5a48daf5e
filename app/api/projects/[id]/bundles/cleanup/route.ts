import { bundleCleanupBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { getBlobStore } from "@/lib/blob";
import { cleanupBundles } from "@/lib/bundles/cleanup";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * POST /api/projects/<id>/bundles/cleanup (owner only): deletes the project's old bundle commits
 * (spec 8 defaults: keep 5, delete older than 30 days) → the cleanup summary. `npm run cleanup`
 * calls it when a server holds the embedded database.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const options = await parseJsonBody(request, bundleCleanupBody);
  return Response.json(await cleanupBundles(getBlobStore(), [project.id], options));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
