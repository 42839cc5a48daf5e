import { getStore } from "@/lib/store";
import { getCredentials, type BackendCredentials } from "@/lib/store/credentials";

/** Spec 4.5: the stored, decrypted credentials of a project, or null. Server-side only. */
export async function getBackendCredentials(projectId: string): Promise<BackendCredentials | null> {
  return getCredentials(await getStore(), projectId);
}
