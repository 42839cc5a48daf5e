import type { ReactNode } from "react";
import { SiteHeader } from "@/app/_components/site-header";
import { requireSessionUser } from "@/lib/session/current";

export default async function ProjectsLayout({ children }: { children: ReactNode }) {
  // Pages check the session themselves too: a layout is not re-rendered on every navigation.
  const user = await requireSessionUser();
  return (
    <>
      <SiteHeader userName={user.name} />
      {children}
    </>
  );
}
