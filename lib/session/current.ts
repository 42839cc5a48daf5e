import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { authenticate } from "@/lib/auth";
import { getConfig } from "@/lib/config";
import { getStore } from "@/lib/store";
import { getOwnedProject, type Project } from "@/lib/store/projects";
import type { User } from "@/lib/store/users";

/**
 * The signed-in user of the request being rendered (server components and server functions),
 * authenticated exactly as the API authenticates: session cookie, bearer token or Supabase JWT.
 */
export async function getSessionUser(): Promise<User | null> {
  const incoming = await headers();
  return authenticate(new Request(getConfig().PUBLIC_BASE_URL, { headers: incoming }));
}

/** The signed-in user; anyone else is sent to the sign-in page. */
export async function requireSessionUser(): Promise<User> {
  const user = await getSessionUser();
  if (!user) redirect("/signin");
  return user;
}

/** The project when the signed-in user owns it; a missing or foreign project is the same 404. */
export async function requireSessionProject(projectId: string): Promise<{ user: User; project: Project }> {
  const user = await requireSessionUser();
  const project = await getOwnedProject(await getStore(), projectId, user.id);
  if (!project) notFound();
  return { user, project };
}
