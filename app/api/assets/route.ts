import { z } from "zod";
import { listedAsset, projectIdQuery } from "@/lib/api-contract/schemas";
import { readAssetManifest } from "@/lib/assets";
import { requireOwnedProject, requireUser } from "@/lib/auth";
import { methodNotAllowed, parseQuery, route } from "@/lib/http";
import { openProjectSandbox } from "@/lib/workspace";

export const dynamic = "force-dynamic";

/** What the dashboard needs of a manifest entry (not strict: `localPath` stays inside the sandbox). */
const listedEntry = z.object(listedAsset.shape).omit({ filename: true });

/**
 * GET /api/assets?projectId= → `{ assets: [{ filename, blobUrl, contentType, size }] }` from the
 * project's asset manifest (spec 2.10); owner only. Entries without the spec's shape (the
 * manifest is a file the app's code may edit) are left out rather than failing the list.
 */
export const GET = route(async (request) => {
  const user = await requireUser(request);
  const { projectId } = parseQuery(request, projectIdQuery);
  const project = await requireOwnedProject(user, projectId);
  const manifest = await readAssetManifest(await openProjectSandbox(project));
  const assets = Object.entries(manifest.assets).flatMap(([filename, entry]) => {
    const parsed = listedEntry.safeParse(entry);
    return parsed.success ? [{ filename, ...parsed.data }] : [];
  });
  return Response.json({ assets });
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
