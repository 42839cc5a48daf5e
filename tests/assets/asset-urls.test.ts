import { describe, expect, it } from "vitest";
import { GET as listRoute } from "@/app/api/assets/route";
import type { AssetUploadResult } from "@/lib/assets";
import { fetchThroughRoute } from "../blob/route-client";
import { assetForm, setupAssetFixture } from "./fixture";
import { sample } from "./samples";

const fx = setupAssetFixture();

async function upload(projectId: string, bytes: Uint8Array): Promise<AssetUploadResult> {
  const response = await fx.upload(assetForm(projectId, "logo.png", bytes));
  expect(response.status).toBe(200);
  return response.json();
}

async function listed(projectId: string): Promise<{ filename: string; blobUrl: string }[]> {
  const response = await listRoute(new Request(`http://localhost:3000/api/assets?projectId=${projectId}`, { headers: fx.owner.headers }), {
    params: Promise.resolve({}),
  } as never);
  return (await response.json()).assets;
}

const bodyOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

describe("asset URLs of a re-upload under the same name (fs driver, served by /blob)", () => {
  it("change with the bytes, agree between upload, manifest and list, and revalidate to the new bytes", async () => {
    const { project, sandbox } = await fx.newProject();
    const first = sample("png", 1_000);
    const second = sample("png", 1_200);

    const before = await upload(project.id, first);
    expect(new URL(before.blobUrl).searchParams.get("v")).toMatch(/^[0-9a-f]{16}$/);
    const cached = await fetchThroughRoute(before.blobUrl);
    expect(cached.status).toBe(200);
    expect(await bodyOf(cached)).toEqual(Buffer.from(first));
    const oldEtag = cached.headers.get("etag")!;

    const after = await upload(project.id, second);
    expect(after.pathname).toBe(before.pathname);
    expect(after.blobUrl).not.toBe(before.blobUrl);
    expect((await fx.manifest(sandbox))!.assets["logo.png"].blobUrl).toBe(after.blobUrl);
    expect(await listed(project.id)).toEqual([expect.objectContaining({ filename: "logo.png", blobUrl: after.blobUrl })]);

    // A cache holding the old copy revalidates it: the validator no longer matches, the new bytes come back.
    const revalidated = await fetchThroughRoute(before.blobUrl, { headers: { "if-none-match": oldEtag } });
    expect(revalidated.status).toBe(200);
    expect(await bodyOf(revalidated)).toEqual(Buffer.from(second));
    const newEtag = revalidated.headers.get("etag")!;
    expect(newEtag).not.toBe(oldEtag);

    const fresh = await fetchThroughRoute(after.blobUrl, { headers: { "if-none-match": newEtag } });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.get("etag")).toBe(newEtag);
  });

  it("stay the same when the same bytes are uploaded again", async () => {
    const { project } = await fx.newProject();
    const bytes = sample("png", 800);
    const first = await upload(project.id, bytes);
    const again = await upload(project.id, bytes);
    expect(again.blobUrl).toBe(first.blobUrl);
    const served = await fetchThroughRoute(again.blobUrl);
    expect(await bodyOf(served)).toEqual(Buffer.from(bytes));
  });
});
