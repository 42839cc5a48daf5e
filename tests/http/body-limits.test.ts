import { afterAll, describe, expect, it } from "vitest";
import { POST as createProjectRoute } from "@/app/api/projects/route";
import { PUT as setEnvRoute } from "@/app/api/projects/[id]/env/route";
import { API_BODY_LIMIT_BYTES } from "@/lib/emulator/http";
import { encryptPlaintextEnvVars, listEnvVars } from "@/lib/emulator/store";
import { JSON_BODY_LIMIT_BYTES, readBodyWithin } from "@/lib/http";
import { getStore } from "@/lib/store";
import { insertProject } from "@/lib/store/projects";
import { emulatorClient } from "../emulator/helpers";
import { createTestUser } from "../helpers/users";

const MB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** A body of `total` bytes made on demand, counting what the reader pulled; nothing is kept. */
function countedBody(total: number): { stream: ReadableStream<Uint8Array>; pulled(): number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close();
      const size = Math.min(CHUNK, total - pulled);
      pulled += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled };
}

describe("JSON routes: 1 MB", () => {
  it("answers 413 to a 5 MB body, reading no more than the limit and a chunk (RSS grows < 20 MB)", async () => {
    const db = await getStore();
    const owner = await createTestUser(db);
    const post = (body: BodyInit, headers: Record<string, string> = {}) =>
      createProjectRoute(
        new Request("http://localhost/api/projects", { method: "POST", headers: { ...owner.headers, "content-type": "application/json", ...headers }, body, duplex: "half" } as RequestInit),
        undefined,
      );
    // The route's first call loads what it uses: measured after it, the growth is the body's alone.
    expect((await post("{}")).status).toBe(400);
    const rssBefore = process.memoryUsage().rss;
    const body = countedBody(5 * MB);
    const response = await post(body.stream);
    expect(response.status).toBe(413);
    expect((await response.json()).error).toMatchObject({ code: "payload_too_large" });
    expect(body.pulled()).toBeLessThanOrEqual(JSON_BODY_LIMIT_BYTES + CHUNK);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(20 * MB);

    // A declared length over the limit is refused before a byte is read.
    const declared = countedBody(5 * MB);
    const refused = await post(declared.stream, { "content-length": String(5 * MB) });
    expect(refused.status).toBe(413);
    expect(declared.pulled()).toBe(0);
  });

  it("gives up a body that stalls (408), not after Node's 300 s", async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'));
      },
    });
    const request = new Request("http://localhost/x", { method: "POST", body: stalled, duplex: "half" } as RequestInit);
    await expect(readBodyWithin(request, MB, { idleTimeoutMs: 200 })).rejects.toMatchObject({ status: 408, code: "body_timeout" });
  });

  it("refuses 20,000 environment variables with 400 before the backend is asked", async () => {
    const db = await getStore();
    const owner = await createTestUser(db);
    const project = await insertProject(db, { ownerId: owner.user.id, name: "env" });
    const values = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`VAR_${index}`, "x"]));
    const response = await setEnvRoute(
      new Request(`http://localhost/api/projects/${project.id}/env`, {
        method: "PUT",
        headers: { ...owner.headers, "content-type": "application/json" },
        body: JSON.stringify({ values }),
      }),
      { params: Promise.resolve({ id: project.id }) },
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("at most 512 variables");
  });
});

describe("emulated deployments: Convex's limits", () => {
  const { provision, close } = emulatorClient();
  afterAll(close);

  const update = (url: string, key: string, body: BodyInit) =>
    fetch(new URL("/api/v1/update_environment_variables", url), { method: "POST", headers: { "content-type": "application/json", authorization: `Convex ${key}` }, body });

  it("refuses an API body over 8 MiB with 413, variable counts and sizes over Convex's with 400, and keeps the values encrypted", async () => {
    const { created, deployKey } = await provision("limits");
    const url = created.deploymentUrl;

    const huge = await update(url, deployKey, JSON.stringify({ changes: [{ name: "BIG", value: "x".repeat(API_BODY_LIMIT_BYTES) }] }));
    expect(huge.status).toBe(413);
    expect((await huge.json()).code).toBe("RequestTooLarge");

    const many = Array.from({ length: 20_000 }, (_, index) => ({ name: `VAR_${index}`, value: "x" }));
    const tooMany = await update(url, deployKey, JSON.stringify({ changes: many }));
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).code).toBe("TooManyEnvironmentVariables");

    // 100 values of 8 KiB (each allowed) pass the 512 KiB total of a deployment: refused, none kept.
    const large = Array.from({ length: 100 }, (_, index) => ({ name: `LARGE_${index}`, value: "y".repeat(8 * 1024) }));
    const tooLarge = await update(url, deployKey, JSON.stringify({ changes: large }));
    expect(tooLarge.status).toBe(400);
    expect((await tooLarge.json()).code).toBe("EnvironmentVariablesTooLarge");
    const db = await getStore();
    expect(await listEnvVars(db, created.deploymentName)).toEqual([]);

    expect((await update(url, deployKey, JSON.stringify({ changes: [{ name: "OPENAI_API_KEY", value: "sk-plaintext-never-stored" }] }))).status).toBe(200);
    const { rows } = await db.query<{ value: string }>("select value from emulator_env_vars where deployment_name = $1", [created.deploymentName]);
    expect(rows).toHaveLength(1);
    expect(rows[0].value).toMatch(/^enc:v1:/);
    expect(rows[0].value).not.toContain("sk-plaintext");
    expect(await listEnvVars(db, created.deploymentName)).toEqual([{ name: "OPENAI_API_KEY", value: "sk-plaintext-never-stored" }]);
  });

  it("encrypts the variables stored in plain text before (the migration of existing rows)", async () => {
    const { created } = await provision("legacy");
    const db = await getStore();
    await db.query("insert into emulator_env_vars (deployment_name, name, value) values ($1, 'LEGACY', 'plain-legacy-value')", [created.deploymentName]);
    expect(await encryptPlaintextEnvVars(db)).toBeGreaterThanOrEqual(1);
    const { rows } = await db.query<{ value: string }>("select value from emulator_env_vars where deployment_name = $1 and name = 'LEGACY'", [created.deploymentName]);
    expect(rows[0].value).toMatch(/^enc:v1:/);
    expect(await listEnvVars(db, created.deploymentName)).toEqual([{ name: "LEGACY", value: "plain-legacy-value" }]);
    expect(await encryptPlaintextEnvVars(db)).toBe(0);
  });
});
