import Link from "next/link";
import { BackendBadge } from "@/app/_components/backend-badge";
import { CreateProjectForm } from "@/app/_components/create-project-form";
import { requireSessionUser } from "@/lib/session/current";
import { getStore } from "@/lib/store";
import { listProjects } from "@/lib/store/projects";

export const dynamic = "force-dynamic";
export const metadata = { title: "Projects · Cloud backend service" };

export default async function ProjectsPage() {
  const user = await requireSessionUser();
  const projects = await listProjects(await getStore(), user.id);

  return (
    <main className="stack">
      <h1>Projects</h1>
      <CreateProjectForm />
      {projects.length === 0 ? (
        <p className="muted">No projects yet.</p>
      ) : (
        <ul className="project-list">
          {projects.map((project) => (
            <li key={project.id} className="card row spread">
              <Link href={`/projects/${project.id}`} className="project-name">
                {project.name}
              </Link>
              <span className="row">
                <BackendBadge state={project.backendProject} />
                <time className="muted small" dateTime={project.createdAt.toISOString()}>
                  {project.createdAt.toISOString().slice(0, 10)}
                </time>
              </span>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
