import { releaseBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { getStore } from "@/lib/store";
import { release } from "@/lib/updates/releases";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * POST /api/projects/<id>/bundles/live (owner only): what the project's update URL serves from
 * now on. `{commitSha}` promotes an uploaded bundle or rolls back to an earlier one (for its
 * runtime version); `{embedded: true, runtimeVersion}` rolls apps of that runtime version back to
 * the update in their binary. → the live release `{platform, runtimeVersion, commitSha, releasedAt}`.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const target = await parseJsonBody(request, releaseBody);
  return Response.json(await release(await getStore(), project.id, target));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
