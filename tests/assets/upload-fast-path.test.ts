import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASSET_FILES_DIR } from "@/lib/assets";
import { uploadFastPath } from "@/lib/fast-paths";
import { assertMatchesApiContract } from "../helpers/api-contract";
import { startHttpServer } from "../helpers/http-server";
import { assetForm, blobBytes, NOTHING_STORED, setupAssetFixture } from "./fixture";
import { sample } from "./samples";

// The upload routes as `npm start` serves them: scripts/server.mjs asks the fast paths first, and
// what they leave goes to Next.js (a 501 here). upload-route.test.ts covers the route handler.
const fx = setupAssetFixture();
let server: Awaited<ReturnType<typeof startHttpServer>>;

beforeAll(async () => {
  server = await startHttpServer((request, response) => {
    if (!uploadFastPath(request, response)) response.writeHead(501).end();
  });
});
afterAll(() => server.close());

/** POSTs a form to the fast path; every answer is checked against the OpenAPI document, as route answers are. */
async function post(path: string, body: FormData, headers: Record<string, string> = fx.owner.headers): Promise<Response> {
  const response = await fetch(`${server.url}${path}`, { method: "POST", headers, body });
  if (response.status !== 501) await assertMatchesApiContract(new Request(`${server.url}${path}`, { method: "POST" }), response);
  return response;
}

describe("the upload fast path", () => {
  it("stores an asset byte for byte in the blob store, the sandbox and the manifest, answering as the route does", async () => {
    const { project, sandbox } = await fx.newProject();
    const bytes = sample("png", 300_000);
    const response = await post("/api/assets/upload", assetForm(project.id, "hero.png", bytes));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await response.json();
    const pathname = `${fx.owner.user.id}/${project.id}/assets/hero.png`;
    expect(body).toEqual({ blobUrl: expect.stringMatching(/^http/), pathname, filename: "hero.png", contentType: "image/png", size: bytes.length });

    const viaRoute = await fx.upload(assetForm(project.id, "hero.png", bytes));
    expect(Object.keys(await viaRoute.json()).sort()).toEqual(Object.keys(body).sort());
    expect(Buffer.from((await blobBytes(body.blobUrl))!).equals(Buffer.from(bytes))).toBe(true);
    expect(Buffer.from(await sandbox.files.read(`${ASSET_FILES_DIR}/hero.png`, { format: "bytes" })).equals(Buffer.from(bytes))).toBe(true);
    expect(Object.keys((await fx.manifest(sandbox))!.assets)).toEqual(["hero.png"]);
    expect(await fx.leftovers(project, sandbox)).toMatchObject({ staging: [], spool: [] });
  });

  it("stores a chat image", async () => {
    const response = await post("/api/upload-image", assetForm(undefined, "chat.png", sample("png")));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({ url: expect.stringMatching(/^http/), pathname: expect.stringMatching(new RegExp(`^chat-images/${fx.owner.user.id}/\\d+-chat-.+\\.png$`)), contentType: "image/png" });
    expect(await blobBytes(body.url)).not.toBeNull();
  });

  it("answers the routes' JSON errors: 401 without a caller, 404 for another owner's project, 415 for a wrong file; nothing stored", async () => {
    const { project, sandbox } = await fx.newProject();
    const anonymous = await post("/api/assets/upload", assetForm(project.id, "a.png", sample("png")), {});
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBeTypeOf("string");

    const stranger = await post("/api/assets/upload", assetForm(project.id, "a.png", sample("png")), fx.stranger.headers);
    expect(stranger.status).toBe(404);
    expect((await stranger.json()).error.code).toBe("project_not_found");

    const wrongType = await post("/api/assets/upload", assetForm(project.id, "notes.txt", Buffer.from("hello")));
    expect(wrongType.status).toBe(415);
    expect((await wrongType.json()).error.code).toBe("unsupported_file_type");
    expect(await fx.leftovers(project, sandbox)).toEqual(NOTHING_STORED);
  });

  it("leaves other methods and paths to Next.js", async () => {
    expect((await fetch(`${server.url}/api/assets/upload`)).status).toBe(501);
    expect((await post("/api/assets/uploads", new FormData())).status).toBe(501);
    expect((await post("/api/assets/upload/x", new FormData())).status).toBe(501);
  });
});
