// The updates room's entry for the routes: each use case on the process-wide store. The modules
// beside it take the store as an argument, so tests and jobs hand them their own.
import { getStore } from "@/lib/store";
import { answerUpdateRequest, type UpdateRequest } from "./protocol";
import { listProjectBundles, release, type ReleaseTarget } from "./releases";
import { ensureSigningCertificate, getSigningCertificate } from "./signing";

export { parseUpdateRequest } from "./protocol";
export { releaseSummary } from "./releases";

/** GET /api/projects/<id>/updates: the Expo Updates protocol answer for an app's request. */
export const answerProjectUpdateRequest = async (projectId: string, request: UpdateRequest) =>
  answerUpdateRequest(await getStore(), projectId, request);

/** GET /api/projects/<id>/bundles: the uploaded bundles and what each stream serves. */
export const listBundlesOf = async (projectId: string) => listProjectBundles(await getStore(), projectId);

/** POST /api/projects/<id>/bundles/live: promotes or rolls back what the project's streams serve. */
export const releaseBundle = async (projectId: string, target: ReleaseTarget) => release(await getStore(), projectId, target);

/** POST /api/projects/<id>/updates/certificate: the signing certificate, made on first call. */
export const ensureCertificateOf = async (projectId: string) => ensureSigningCertificate(await getStore(), projectId);

/** GET /api/projects/<id>/updates/certificate: the signing certificate (404 before it is made). */
export const certificateOf = async (projectId: string) => getSigningCertificate(await getStore(), projectId);
