import { bundleBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { buildProjectBundle } from "@/lib/bundles/project-build";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { getStore } from "@/lib/store";
import { listProjectBundles } from "@/lib/updates/releases";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * POST /api/projects/<id>/bundles (owner only): exports the app in the project's sandbox and
 * uploads the static iOS bundle (spec 4.4). 200 `{success: true, manifestUrl, bundleUrl,
 * commitSha}`; no body (or `{}`) builds the app repository's HEAD. A failed build answers
 * `{success: false, error: {code, message}}`: 422 when the export fails (the message quotes the
 * CLI's redacted output), 404 for an unknown commit, 502 when the sandbox or blob store fails;
 * nothing is uploaded then.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const body = await parseJsonBody(request, bundleBody, { optional: true });
  const result = await buildProjectBundle(project, await openProjectSandbox(project), body);
  if (result.success) return Response.json(result);
  return Response.json(
    { success: false, commitSha: result.commitSha, error: { code: result.code, message: result.error } },
    { status: result.status },
  );
});

/**
 * GET /api/projects/<id>/bundles (owner only): the uploaded bundles, newest first, each with
 * `live` when the update URL serves it, and `releases`: what each (platform, runtime version)
 * serves (`commitSha: null` after a rollback to the embedded update).
 */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(await listProjectBundles(await getStore(), project.id));
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
