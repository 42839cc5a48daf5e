import { requireProjectOwner } from "@/lib/auth";
import { getBlobStore } from "@/lib/blob";
import { methodNotAllowed, route } from "@/lib/http";
import { ensureAppDevServer } from "@/lib/dev-servers";
import { getBrowserPool, takeProjectScreenshots } from "@/lib/screenshots";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** Screenshots the project's preview (mobile + desktop) → `{ mobileUrl, desktopUrl }`. */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  // Without a browser, answer 503 at once rather than after starting the preview.
  await getBrowserPool().get();
  // After a service restart nothing serves the preview until it is started again.
  const previewUrl = await ensureAppDevServer(await openProjectSandbox(project));
  return Response.json(await takeProjectScreenshots(project.id, previewUrl, { blob: getBlobStore() }));
});

export const { GET, HEAD, PUT, PATCH, DELETE } = methodNotAllowed(["POST"]);
