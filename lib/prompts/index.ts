import crypto from "node:crypto";
import type { Project } from "@/lib/store/projects";
import { BACKEND_PROMPT } from "./backend";
import { BASE_PROMPT } from "./base";

/** Spec 1.6: the one place that decides whether a project counts as backend-connected. */
export function isBackendConnected(project: Pick<Project, "backendProject">): boolean {
  return project.backendProject?.kind === "connected";
}

/** The assistant's system prompt; the backend guidelines are included exactly when connected. */
export function getSystemPrompt(backendConnected: boolean): string {
  return backendConnected ? `${BASE_PROMPT}\n\n${BACKEND_PROMPT}` : BASE_PROMPT;
}

/**
 * GET /api/projects/<id>/system-prompt: the project's prompt and a version that changes exactly
 * when its text does (a digest), so the builder can cache it.
 */
export function systemPromptOf(project: Pick<Project, "backendProject">) {
  const backendConnected = isBackendConnected(project);
  const systemPrompt = getSystemPrompt(backendConnected);
  const version = crypto.createHash("sha256").update(systemPrompt).digest("hex").slice(0, 16);
  return { systemPrompt, backendConnected, version };
}
