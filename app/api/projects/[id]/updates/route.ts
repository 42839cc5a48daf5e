import { methodNotAllowed, route } from "@/lib/http";
import { answerProjectUpdateRequest, parseUpdateRequest } from "@/lib/updates";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * GET /api/projects/<id>/updates (public: apps call it): the project's Expo Updates protocol v1
 * endpoint, what an app's `updates.url` points at. Answers `multipart/mixed` with the latest
 * released manifest for the app's `expo-platform` and `expo-runtime-version`, or a directive
 * (`noUpdateAvailable`, `rollBackToEmbedded`); 400 names a missing or unsupported header.
 */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const updateRequest = parseUpdateRequest(request);
  return answerProjectUpdateRequest((await params).id, updateRequest);
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
