import { redirect } from "next/navigation";
import { getSessionUser } from "@/lib/session/current";

export const dynamic = "force-dynamic";

/** The dashboard starts at the project list; visitors without a session sign in first. */
export default async function HomePage() {
  redirect((await getSessionUser()) ? "/projects" : "/signin");
}
