"use server";

import { getSessionUser } from "@/lib/session/current";
import { getStore } from "@/lib/store";
import { getOwnedProject } from "@/lib/store/projects";
import { readBackendSnapshot, type BackendSnapshot } from "./data";

/**
 * The backend card's live view while a run is going: state plus finished step names. Null for a
 * caller who does not own the project (server functions are reachable by direct POST).
 */
export async function pollBackendSnapshot(projectId: string): Promise<BackendSnapshot | null> {
  const user = await getSessionUser();
  if (!user || typeof projectId !== "string") return null;
  const db = await getStore();
  const project = await getOwnedProject(db, projectId, user.id);
  return project ? readBackendSnapshot(db, project) : null;
}
