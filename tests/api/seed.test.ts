import { describe, expect, it } from "vitest";
import { GET as listProjectsRoute } from "@/app/api/projects/route";
import { seedDemoIfEmpty } from "@/lib/auth/seed";
import { getStore } from "@/lib/store";

describe("demo seed", () => {
  it("creates a demo user, token and project on an empty store, exactly once", async () => {
    const db = await getStore();
    const [first, second] = await Promise.all([seedDemoIfEmpty(db), seedDemoIfEmpty(db)]);
    const seeds = [first, second].filter((seed) => seed !== null);
    expect(seeds).toHaveLength(1);
    const { token, project } = seeds[0]!;
    expect(token).toMatch(/^cbs_[A-Za-z0-9_-]{43}$/);

    const response = await listProjectsRoute(
      new Request("http://localhost/api/projects", { headers: { authorization: `Bearer ${token}` } }),
      undefined,
    );
    const body = await response.json();
    expect(body.projects).toEqual([expect.objectContaining({ id: project.id, name: "Demo app" })]);
    expect(await seedDemoIfEmpty(db)).toBeNull();
  });
});
