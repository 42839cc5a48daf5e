import { releaseBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { releaseBundle, releaseSummary } from "@/lib/updates";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * POST /api/projects/<id>/bundles/live (owner only): what the project's update URL serves from
 * now on, per channel (`channel`, default `main`) and platform (`platform`, default every one).
 * `{commitSha, rolloutPercent?}` promotes an uploaded bundle (to a share of devices; the same
 * commit with a higher share raises a staged rollout) or rolls back to an earlier one, after a
 * delivery check (502 `delivery_check_failed` keeps the previous release); `{embedded: true,
 * runtimeVersion}` rolls apps of that runtime version back to the update in their binary.
 * → `{releases}`: the live release of each stream it changed.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const target = await parseJsonBody(request, releaseBody);
  const releases = await releaseBundle(project.id, target);
  return Response.json({ releases: releases.map(releaseSummary) });
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
