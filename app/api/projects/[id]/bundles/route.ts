import { bundleBody } from "@/lib/api-contract/schemas";
import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, parseJsonBody, route } from "@/lib/http";
import { enqueueProjectJob, JOB_KINDS, projectJobPath } from "@/lib/jobs";
import { listBundlesOf } from "@/lib/updates";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * POST /api/projects/<id>/bundles (owner only): queues a job that exports the app in the
 * project's sandbox for iOS and Android in one run (or only the `platforms` asked for), uploads the static bundles (spec 4.4)
 * and, once their delivery check passed, releases them to `channel` (default `main`) for
 * `rolloutPercent` of devices; no body (or `{}`) builds the working tree, committed first. 202 with the
 * job and its Location; once succeeded its result is `{success: true, manifestUrl, bundleUrl,
 * platforms, commitSha, workingTreeCommitted, workingTreeDiffers}`; a failed delivery check fails the job with `delivery_check_failed`. A failed export fails the job with
 * `bundle_export_failed` (the message quotes the CLI's redacted output), an unknown commit with
 * `commit_not_found`; a sandbox or blob store failure is retried first. Nothing is uploaded then.
 */
export const POST = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  const body = await parseJsonBody(request, bundleBody, { optional: true });
  const job = await enqueueProjectJob(JOB_KINDS.bundleBuild, project.id, body ?? {});
  return Response.json(job, { status: 202, headers: { location: projectJobPath(project.id, job.id) } });
});

/**
 * GET /api/projects/<id>/bundles (owner only): the uploaded bundles, newest first, each with
 * `live` when the update URL serves it and `deliveryError` when its check failed, and `releases`:
 * what each stream (channel, platform, runtime version) serves (`commitSha: null` after a
 * rollback to the embedded update; `stable` for the devices a staged rollout leaves out).
 */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(await listBundlesOf(project.id));
});

export const { PUT, PATCH, DELETE } = methodNotAllowed(["GET", "POST"]);
