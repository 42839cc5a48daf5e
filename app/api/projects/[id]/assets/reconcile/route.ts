import { assetReconcileBody } from "@/lib/api-contract/schemas";
import { reconcileAssetsOfProject } from "@/lib/assets";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";

export const dynamic = "force-dynamic";

/**
 * POST /api/projects/<id>/assets/reconcile (owner only): deletes the project's orphan asset blobs,
 * records manifest entries of earlier versions, and reports assets whose blob is gone → the report.
 * `npm run assets:reconcile` calls it when a server holds the embedded database.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const { dryRun } = await parseJsonBody(request, assetReconcileBody);
  return Response.json(await reconcileAssetsOfProject(project, { dryRun }));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
