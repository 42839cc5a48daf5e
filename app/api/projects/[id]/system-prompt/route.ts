import { requireProjectOwner } from "@/lib/auth";
import { methodNotAllowed, route } from "@/lib/http";
import { systemPromptOf } from "@/lib/prompts";

export const dynamic = "force-dynamic";

/** The assistant's system prompt for the project, with the backend guidelines exactly when connected (spec 1.6); owner only. */
export const GET = route<{ params: Promise<{ id: string }> }>(async (request, { params }) => {
  const { project } = await requireProjectOwner(request, (await params).id);
  return Response.json(systemPromptOf(project));
});

export const { POST, PUT, PATCH, DELETE } = methodNotAllowed(["GET"]);
