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
