import fs from "node:fs";
import os from "node:os";
import path from "node:path";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-scratch-"));
Object.assign(process.env, { DATA_DIR: dataDir, LOG_LEVEL: "silent", SEED_DEMO: "false" });
const { POST } = await import("@/app/api/assets/upload/route");
const { getSandboxProvider } = await import("@/lib/sandbox");
const { getStore } = await import("@/lib/store");
const { insertProject, updateProjectSandbox } = await import("@/lib/store/projects");
const { createTestUser } = await import("../tests/helpers/users");
const { multipartBody, streamingRequest } = await import("../tests/assets/multipart");
const { pngChunks } = await import("../tests/assets/samples");
const db = await getStore();
const { user, headers } = await createTestUser(db, "Bench");
const sandbox = await getSandboxProvider().create();
const project = await insertProject(db, { ownerId: user.id, name: "bench" });
await updateProjectSandbox(db, project.id, { sandboxId: sandbox.sandboxId, previewUrl: null });
const png = Buffer.concat([...pngChunks(10*1024*1024)]);
const timings: Record<string, number[]> = {};
const wrap = (obj: any, name: string, label: string) => { const orig = obj[name].bind(obj); obj[name] = async (...a: any[]) => { const t = performance.now(); try { return await orig(...a); } finally { (timings[label] ??= []).push(performance.now() - t); } }; };
wrap(sandbox.commands, "run", "commands.run");
const { getBlobStore } = await import("@/lib/blob");
wrap(getBlobStore(), "putFile", "putFile");
wrap(db, "query", "db.query");
wrap(db, "transaction", "db.transaction");
async function up(size: number, name: string) {
  const body = multipartBody([{ name: "projectId", body: project.id }, { name: "file", filename: name, body: size >= 10*1024*1024 ? [png] : pngChunks(size) }]);
  const t = performance.now();
  const r = await POST(streamingRequest("http://localhost/api/assets/upload", body, headers), { params: Promise.resolve({}) } as never);
  if (r.status !== 200) throw new Error(await r.text());
  return performance.now() - t;
}
await up(4096, "w.png");
for (const size of [4096, 10*1024*1024]) {
  for (const k of Object.keys(timings)) delete timings[k];
  const ts = [];
  for (let i = 0; i < 5; i++) ts.push(await up(size, `s${i}.png`));
  console.log(size, ts.map((t) => t.toFixed(0)).join(" "));
  for (const [k, v] of Object.entries(timings)) console.log("  ", k, v.length / 5, "per upload, total/upload", (v.reduce((a, b) => a + b, 0) / 5).toFixed(1));
}
process.exit(0);
