import crypto from "node:crypto";
import type { MultipartPart } from "@remix-run/multipart-parser";
import { parseDictionary, type Item } from "structured-headers";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as listBundlesRoute } from "@/app/api/projects/[id]/bundles/route";
import { POST as releaseRoute } from "@/app/api/projects/[id]/bundles/live/route";
import { GET as downloadCertificateRoute, POST as createCertificateRoute } from "@/app/api/projects/[id]/updates/certificate/route";
import { getBlobStore } from "@/lib/blob";
import { cleanupBundles } from "@/lib/bundles/cleanup";
import { createUpdateManifest, type UpdateManifest } from "@/lib/bundles/manifest";
import { bundlePrefix } from "@/lib/bundles/paths";
import { getStore } from "@/lib/store";
import { insertProject, type Project } from "@/lib/store/projects";
import { publishBundles } from "@/lib/updates/releases";
import { isInRollout } from "@/lib/updates/streams";
import { fetchBlobUrl, pngImage, sha256Base64Url } from "../bundles/build-fixture";
import { createTestUser } from "../helpers/users";
import { directiveOf, manifestOf, partNamed, partsOf, requestUpdate as requestUpdateOf, RUNTIME } from "./update-client";

const BASE = "http://localhost:3000";
let owner: Awaited<ReturnType<typeof createTestUser>>;

const params = (id: string) => ({ params: Promise.resolve({ id }) });

interface StoreOptions {
  runtimeVersion?: string;
  seed?: number;
  platform?: "ios" | "android";
  channel?: string;
  rolloutPercent?: number;
  /** Removes this stored file (relative to the commit's folder) before publishing. */
  remove?: string;
}

/**
 * Stores a bundle the way lib/bundles does (bundle, asset, then manifest blobs under the commit's
 * folder) and publishes it, as a build does: after its delivery check.
 */
async function storeBundle(project: Project, commitSha: string, options: StoreOptions = {}): Promise<UpdateManifest> {
  const blob = getBlobStore();
  const platform = options.platform ?? "ios";
  const prefix = bundlePrefix(project.id, commitSha);
  const bundle = new TextEncoder().encode(`console.log(${JSON.stringify(`${platform}:${commitSha}`)});`);
  const image = pngImage(8, options.seed ?? 1);
  const imageKey = crypto.createHash("md5").update(image).digest("hex");
  const put = (name: string, body: Uint8Array | string, contentType: string) => blob.put(prefix + name, body, { access: "public", allowOverwrite: true, contentType });
  const launch = await put(`${platform}/index.js`, bundle, "application/javascript");
  const asset = await put(`assets/${imageKey}`, image, "image/png");
  const createdAt = new Date();
  const manifest = createUpdateManifest({
    projectId: project.id,
    platform,
    commitSha,
    commitMessage: `Commit ${commitSha}`,
    runtimeVersion: options.runtimeVersion ?? RUNTIME,
    createdAt,
    launchAsset: { bytes: bundle, url: launch.url },
    assets: [{ bytes: image, url: asset.url, key: imageKey, type: "png", contentType: "image/png" }],
    expoConfig: { name: "My App", runtimeVersion: options.runtimeVersion ?? RUNTIME },
  });
  const manifestText = JSON.stringify(manifest);
  await put(`${platform}/manifest.json`, manifestText, "application/json");
  if (options.remove) await blob.del(prefix + (options.remove === "asset" ? `assets/${imageKey}` : options.remove));
  const record = {
    projectId: project.id,
    platform,
    commitSha,
    commitMessage: `Commit ${commitSha}`,
    runtimeVersion: manifest.runtimeVersion,
    updateId: manifest.id,
    manifest: manifestText,
    size: bundle.byteLength + image.byteLength,
    createdAt,
  };
  await publishBundles(await getStore(), [record], { channel: options.channel, rolloutPercent: options.rolloutPercent });
  return manifest;
}

const newProject = async (name: string) => insertProject(await getStore(), { ownerId: owner.user.id, name });

/** A manifest request as expo-updates makes it. */
const requestUpdate = (project: Project, headers: Record<string, string> = {}) => requestUpdateOf(project.id, headers);

const postRelease = (project: Project, body: unknown) =>
  releaseRoute(
    new Request(`${BASE}/api/projects/${project.id}/bundles/live`, {
      method: "POST",
      headers: { ...owner.headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    params(project.id),
  );

const listBundles = async (project: Project) =>
  (await listBundlesRoute(new Request(`${BASE}/api/projects/${project.id}/bundles`, { headers: owner.headers }), params(project.id))).json();

beforeAll(async () => {
  owner = await createTestUser(await getStore(), "Owner");
});

describe("GET /api/projects/<id>/updates (Expo Updates protocol v1)", () => {
  let project: Project;
  let first: UpdateManifest;
  let second: UpdateManifest;

  beforeAll(async () => {
    project = await newProject("Updated app");
    first = await storeBundle(project, "aaaaaaa1", { seed: 1 });
    second = await storeBundle(project, "bbbbbbb2", { seed: 2 });
  });

  it("answers the latest published bundle's manifest, every field per the protocol, assets pointing at the stored blobs", async () => {
    const manifest = await manifestOf(await requestUpdate(project));
    expect(manifest).toEqual(second);
    expect(manifest.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Date(manifest.createdAt).toISOString()).toBe(manifest.createdAt);
    expect(manifest.runtimeVersion).toBe(RUNTIME);
    expect(manifest.metadata).toEqual({ platform: "ios", commitSha: "bbbbbbb2", commitMessage: "Commit bbbbbbb2" });
    expect(manifest.extra).toEqual({ expoClient: { name: "My App", runtimeVersion: RUNTIME } });
    expect(manifest.launchAsset).toMatchObject({ contentType: "application/javascript", key: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(manifest.assets).toEqual([expect.objectContaining({ contentType: "image/png", fileExtension: ".png" })]);
    for (const asset of [manifest.launchAsset, ...manifest.assets]) {
      expect(asset.url.startsWith(`${BASE}/blob/${bundlePrefix(project.id, "bbbbbbb2")}`)).toBe(true);
      const stored = await fetchBlobUrl(asset.url);
      expect(stored.status).toBe(200);
      expect(sha256Base64Url(stored.bytes)).toBe(asset.hash);
    }
  });

  it("answers noUpdateAvailable when the app already runs the latest update, or nothing was released for its runtime version", async () => {
    expect(await directiveOf(await requestUpdate(project, { "expo-current-update-id": second.id }))).toEqual({ type: "noUpdateAvailable" });
    // iOS sends its UUIDs upper-case.
    expect(await directiveOf(await requestUpdate(project, { "expo-current-update-id": second.id.toUpperCase() }))).toEqual({ type: "noUpdateAvailable" });
    expect(await manifestOf(await requestUpdate(project, { "expo-current-update-id": first.id }))).toEqual(second);
    expect(await directiveOf(await requestUpdate(project, { "expo-runtime-version": "2.0.0" }))).toEqual({ type: "noUpdateAvailable" });
    expect(await directiveOf(await requestUpdate(project, { "expo-platform": "android" }))).toEqual({ type: "noUpdateAvailable" });
  });

  it("serves an earlier bundle after a rollback to it, and rollBackToEmbedded after a rollback to the embedded update", async () => {
    const rolledBack = await postRelease(project, { commitSha: "aaaaaaa1" });
    expect(rolledBack.status).toBe(200);
    expect((await rolledBack.json()).releases).toEqual([expect.objectContaining({ channel: "main", platform: "ios", runtimeVersion: RUNTIME, commitSha: "aaaaaaa1", rolloutPercent: 100 })]);
    expect(await manifestOf(await requestUpdate(project, { "expo-current-update-id": second.id }))).toEqual(first);
    expect((await listBundles(project)).bundles.map((bundle: { commitSha: string; live: boolean }) => [bundle.commitSha, bundle.live])).toEqual([
      ["bbbbbbb2", false],
      ["aaaaaaa1", true],
    ]);

    const embedded = await postRelease(project, { embedded: true, runtimeVersion: RUNTIME });
    expect(embedded.status).toBe(200);
    const [release] = (await embedded.json()).releases;
    expect(release).toMatchObject({ commitSha: null });
    const directive = await directiveOf(await requestUpdate(project, { "expo-current-update-id": first.id }));
    expect(directive).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: new Date(release.releasedAt).toISOString() } });
    expect((await listBundles(project)).releases).toEqual([expect.objectContaining({ runtimeVersion: RUNTIME, commitSha: null })]);

    // Promoting again serves the bundle again.
    expect((await postRelease(project, { commitSha: "bbbbbbb2" })).status).toBe(200);
    expect(await manifestOf(await requestUpdate(project))).toEqual(second);
  });

  it("refuses releases of unknown bundles and runtime versions", async () => {
    expect((await (await postRelease(project, { commitSha: "ccccccc3" })).json()).error.code).toBe("bundle_not_found");
    expect((await (await postRelease(project, { embedded: true, runtimeVersion: "9.9.9" })).json()).error.code).toBe("release_not_found");
    expect((await postRelease(project, { commitSha: "not a commit" })).status).toBe(400);
  });

  it.each([
    ["a missing platform", { "expo-platform": "" }, "missing_platform", /expo-platform is missing/],
    ["an unknown platform", { "expo-platform": "web" }, "invalid_platform", /expo-platform "web" is not supported/],
    ["a missing runtime version", { "expo-runtime-version": "" }, "missing_runtime_version", /expo-runtime-version is missing/],
    ["an unknown protocol version", { "expo-protocol-version": "2" }, "unsupported_protocol_version", /expo-protocol-version "2" is not supported/],
    ["a missing protocol version", { "expo-protocol-version": "" }, "unsupported_protocol_version", /expo-protocol-version is missing/],
    ["an unparsable signature request", { "expo-expect-signature": "sig=(" }, "invalid_signature_request", /expo-expect-signature/],
  ])("answers 400 to %s", async (_case, headers, code, message) => {
    const response = await requestUpdate(project, headers);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(code);
    expect(body.error.message).toMatch(message);
  });

  it("answers 404 for an unknown project", async () => {
    const response = await requestUpdate({ ...project, id: crypto.randomUUID() });
    expect(response.status).toBe(404);
  });
});

describe("code signing", () => {
  let project: Project;

  beforeAll(async () => {
    project = await newProject("Signed app");
    await storeBundle(project, "ddddddd4");
  });

  const certificateRequest = (method: string, headers = owner.headers) =>
    new Request(`${BASE}/api/projects/${project.id}/updates/certificate`, { method, headers });

  it("refuses to answer unsigned when the app expects a signature and the project has no key", async () => {
    const response = await requestUpdate(project, { "expo-expect-signature": 'sig, keyid="main", alg="rsa-v1_5-sha256"' });
    expect(response.status).toBe(409);
    expect((await response.json()).error.code).toBe("signing_not_configured");
    expect((await downloadCertificateRoute(certificateRequest("GET"), params(project.id))).status).toBe(404);
  });

  it("signs the manifest and directives with RSA-SHA256; the downloaded certificate verifies them", async () => {
    const created = await createCertificateRoute(certificateRequest("POST"), params(project.id));
    expect(created.status).toBe(201);
    const pem = await created.text();
    expect((await createCertificateRoute(certificateRequest("POST"), params(project.id))).status).toBe(200);
    const downloaded = await downloadCertificateRoute(certificateRequest("GET"), params(project.id));
    expect(await downloaded.text()).toBe(pem);
    expect(pem).not.toMatch(/PRIVATE KEY/);
    const certificate = new crypto.X509Certificate(pem);
    // expo-updates accepts only a certificate for code signing.
    expect(certificate.keyUsage).toContain("1.3.6.1.5.5.7.3.3");

    const verify = (part: MultipartPart) => {
      const signature = parseDictionary(part.headers["expo-signature"] ?? "");
      const value = (name: string) => (signature.get(name) as Item)[0];
      expect(value("keyid")).toBe("main");
      expect(value("alg")).toBe("rsa-v1_5-sha256");
      return crypto.verify("sha256", part.bytes, certificate.publicKey, Buffer.from(String(value("sig")), "base64"));
    };
    const expect_ = { "expo-expect-signature": 'sig, keyid="main", alg="rsa-v1_5-sha256"' };
    const parts = await partsOf(await requestUpdate(project, expect_));
    const manifestPart = partNamed(parts, "manifest")!;
    expect(verify(manifestPart)).toBe(true);
    expect(partNamed(parts, "extensions")!.headers["expo-signature"]).toBeUndefined();

    const directiveParts = await partsOf(await requestUpdate(project, { ...expect_, "expo-current-update-id": JSON.parse(manifestPart.text).id }));
    expect(JSON.parse(directiveParts[0].text)).toEqual({ type: "noUpdateAvailable" });
    expect(verify(directiveParts[0])).toBe(true);

    // Altered bytes do not verify.
    const tampered = { ...manifestPart, headers: manifestPart.headers, bytes: new TextEncoder().encode(manifestPart.text.replace("ddddddd4", "eeeeeee5")) } as MultipartPart;
    expect(verify(tampered)).toBe(false);

    // A publish with signing on passes its delivery check (which verifies the signature against
    // the certificate); a client accepting only JSON gets the manifest whole, signed in the header.
    const next = await storeBundle(project, "fffffff6", { seed: 6 });
    const json = await requestUpdate(project, { ...expect_, accept: "application/expo+json" });
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toBe("application/expo+json; charset=utf-8");
    const body = await json.text();
    expect(JSON.parse(body)).toEqual(next);
    const signature = parseDictionary(json.headers.get("expo-signature") ?? "");
    expect(crypto.verify("sha256", Buffer.from(body), certificate.publicKey, Buffer.from(String((signature.get("sig") as Item)[0]), "base64"))).toBe(true);
  });

  it("lets only the owner create or download the certificate", async () => {
    const stranger = await createTestUser(await getStore(), "Stranger");
    expect((await createCertificateRoute(certificateRequest("POST", stranger.headers), params(project.id))).status).toBe(404);
    expect((await downloadCertificateRoute(certificateRequest("GET", stranger.headers), params(project.id))).status).toBe(404);
  });
});

describe("cleanup and the served bundle", () => {
  it("keeps the bundle the update URL serves, however old, and forgets the deleted ones", async () => {
    const project = await newProject("Cleaned app");
    const oldest = await storeBundle(project, "1111111a", { seed: 3 });
    await storeBundle(project, "2222222b", { seed: 4 });
    await storeBundle(project, "3333333c", { seed: 5 });
    // Cleanup orders commits by their blobs' upload times: one day apart, the first oldest.
    const db = await getStore();
    for (const [daysAgo, commit] of [[3, "1111111a"], [2, "2222222b"], [1, "3333333c"]] as const) {
      await db.query("update blobs set uploaded_at = $2 where pathname like $1", [`${bundlePrefix(project.id, commit)}%`, new Date(Date.now() - daysAgo * 86_400_000)]);
    }
    expect((await postRelease(project, { commitSha: "1111111a" })).status).toBe(200);

    const summary = await cleanupBundles(getBlobStore(), [project.id], { keep: 1 });
    expect(summary).toMatchObject({ commitsKept: 2, commitsDeleted: 1 });
    expect((await listBundles(project)).bundles.map((bundle: { commitSha: string }) => bundle.commitSha)).toEqual(["3333333c", "1111111a"]);
    const manifest = await manifestOf(await requestUpdate(project));
    expect(manifest).toEqual(oldest);
    for (const asset of [manifest.launchAsset, ...manifest.assets]) expect((await fetchBlobUrl(asset.url)).status).toBe(200);
    expect((await postRelease(project, { commitSha: "2222222b" })).status).toBe(404);
  });
});

describe("Android beside iOS, channels", () => {
  let project: Project;
  let ios: UpdateManifest;
  let android: UpdateManifest;
  let beta: UpdateManifest;

  beforeAll(async () => {
    project = await newProject("Two platforms");
    ios = await storeBundle(project, "abcdef01", { platform: "ios", seed: 7 });
    android = await storeBundle(project, "abcdef01", { platform: "android", seed: 7 });
    beta = await storeBundle(project, "abcdef02", { platform: "android", seed: 8, channel: "beta" });
  });

  it("answers each platform its own manifest", async () => {
    const served = { ios: await manifestOf(await requestUpdate(project)), android: await manifestOf(await requestUpdate(project, { "expo-platform": "android" })) };
    expect(served).toEqual({ ios, android });
    expect(served.android.metadata.platform).toBe("android");
    expect(served.android.launchAsset.url).toMatch(/\/android\/index\.js$/);
    expect(served.android.id).not.toBe(served.ios.id);
    const launch = await fetchBlobUrl(served.android.launchAsset.url);
    expect(sha256Base64Url(launch.bytes)).toBe(served.android.launchAsset.hash);
  });

  it("serves a channel's release to the apps of that channel only; an unknown channel gets noUpdateAvailable", async () => {
    expect(await manifestOf(await requestUpdate(project, { "expo-platform": "android", "expo-channel-name": "beta" }))).toEqual(beta);
    expect(await manifestOf(await requestUpdate(project, { "expo-platform": "android", "expo-channel-name": "main" }))).toEqual(android);
    expect(await directiveOf(await requestUpdate(project, { "expo-platform": "ios", "expo-channel-name": "beta" }))).toEqual({ type: "noUpdateAvailable" });
    expect(await directiveOf(await requestUpdate(project, { "expo-channel-name": "no-such-channel" }))).toEqual({ type: "noUpdateAvailable" });
    const invalid = await requestUpdate(project, { "expo-channel-name": "../main" });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error.code).toBe("invalid_channel");
  });

  it("promotes and rolls back per channel and platform, leaving the other streams as they were", async () => {
    const promoted = await postRelease(project, { commitSha: "abcdef02", channel: "main" });
    expect(promoted.status).toBe(200);
    // The commit has an Android bundle only: only Android's main stream changes.
    expect((await promoted.json()).releases).toEqual([expect.objectContaining({ channel: "main", platform: "android", commitSha: "abcdef02" })]);
    expect(await manifestOf(await requestUpdate(project, { "expo-platform": "android" }))).toEqual(beta);
    expect(await manifestOf(await requestUpdate(project))).toEqual(ios);

    const embedded = await postRelease(project, { embedded: true, runtimeVersion: RUNTIME, channel: "beta" });
    expect((await embedded.json()).releases).toEqual([expect.objectContaining({ channel: "beta", platform: "android", commitSha: null })]);
    expect((await directiveOf(await requestUpdate(project, { "expo-platform": "android", "expo-channel-name": "beta" }))).type).toBe("rollBackToEmbedded");
    expect(await manifestOf(await requestUpdate(project, { "expo-platform": "android" }))).toEqual(beta);

    const both = await postRelease(project, { commitSha: "abcdef01" });
    expect((await both.json()).releases.map((entry: { platform: string }) => entry.platform).sort()).toEqual(["android", "ios"]);
    expect(await manifestOf(await requestUpdate(project, { "expo-platform": "android" }))).toEqual(android);
    expect((await postRelease(project, { commitSha: "abcdef02", platform: "ios" })).status).toBe(404);
    expect((await postRelease(project, { commitSha: "abcdef01", channel: "not a channel" })).status).toBe(400);
  });
});

describe("staged rollouts", () => {
  let project: Project;
  let stable: UpdateManifest;
  let staged: UpdateManifest;
  const clientIds = Array.from({ length: 1000 }, (_, index) => crypto.createHash("sha256").update(`device ${index}`).digest("hex").slice(0, 32));
  // Each request costs a query and a multipart answer: the endpoint is asked for every twentieth
  // device (50), the share is counted over all 1,000 with the same draw.
  const sampled = clientIds.filter((_, index) => index % 20 === 0);

  /** The update the endpoint serves each sampled device, by client id. */
  async function servedIds(): Promise<Map<string, string>> {
    const served = new Map<string, string>();
    for (const clientId of sampled) served.set(clientId, (await manifestOf(await requestUpdate(project, { "eas-client-id": clientId }))).id);
    return served;
  }
  const inRollout = (percent: number) => new Set(clientIds.filter((clientId) => isInRollout("5555555b", clientId, percent)));

  beforeAll(async () => {
    project = await newProject("Staged");
    stable = await storeBundle(project, "5555555a", { seed: 9 });
    staged = await storeBundle(project, "5555555b", { seed: 10, rolloutPercent: 25 });
  });

  it("gives a 25 % release to about 250 of 1,000 devices, each device the same answer every time; the rest keep the full release", async () => {
    const quarter = inRollout(25);
    expect(quarter.size).toBeGreaterThanOrEqual(200);
    expect(quarter.size).toBeLessThanOrEqual(300);
    const first = await servedIds();
    for (const [clientId, id] of first) expect(id, clientId).toBe(quarter.has(clientId) ? staged.id : stable.id);
    // Upper-case ids (iOS sends UUIDs so) draw the same.
    for (const clientId of sampled.slice(0, 5)) {
      expect((await manifestOf(await requestUpdate(project, { "eas-client-id": clientId.toUpperCase() }))).id).toBe(first.get(clientId));
    }
    expect(await servedIds()).toEqual(first);
    // Without an eas-client-id a request is left out of the rollout.
    expect(await manifestOf(await requestUpdate(project))).toEqual(stable);
    const listed = (await listBundles(project)).releases;
    expect(listed).toEqual([expect.objectContaining({ commitSha: "5555555b", rolloutPercent: 25, stable: expect.objectContaining({ commitSha: "5555555a", rolloutPercent: 100 }) })]);
    // Cleanup keeps the full release the devices left out still get.
    expect(await cleanupBundles(getBlobStore(), [project.id], { keep: 0, dryRun: true })).toMatchObject({ commitsKept: 2, commitsDeleted: 0 });

    // Raising the share keeps every device that had the release.
    expect((await postRelease(project, { commitSha: "5555555b", rolloutPercent: 50 })).status).toBe(200);
    const half = inRollout(50);
    expect(half.size).toBeGreaterThanOrEqual(450);
    expect(half.size).toBeLessThanOrEqual(550);
    for (const clientId of quarter) expect(half.has(clientId)).toBe(true);
    for (const [clientId, id] of await servedIds()) expect(id, clientId).toBe(half.has(clientId) ? staged.id : stable.id);

    // Rolling back to the full release serves it to everyone.
    expect((await postRelease(project, { commitSha: "5555555a" })).status).toBe(200);
    expect(new Set((await servedIds()).values())).toEqual(new Set([stable.id]));
  });

  it("refuses a share outside 1–100", async () => {
    for (const rolloutPercent of [0, 101, 12.5]) expect((await postRelease(project, { commitSha: "5555555b", rolloutPercent })).status).toBe(400);
  });
});

describe("delivery check after every publish", () => {
  it("keeps a release whose asset or launch asset blob is missing from going live, says why, and keeps the previous one live", async () => {
    const project = await newProject("Broken delivery");
    const live = await storeBundle(project, "7777777a", { seed: 11 });
    for (const [commit, remove, reason] of [
      ["7777777b", "asset", /asset .* answered 404/],
      ["7777777c", "ios/index.js", /launch asset .* answered 404/],
    ] as const) {
      await expect(storeBundle(project, commit, { seed: 12, remove })).rejects.toMatchObject({ code: "delivery_check_failed", status: 502, message: expect.stringMatching(reason) });
      expect(await manifestOf(await requestUpdate(project))).toEqual(live);
      const listed = (await listBundles(project)).bundles.find((bundle: { commitSha: string }) => bundle.commitSha === commit);
      expect(listed).toMatchObject({ live: false, deliveryError: expect.stringMatching(reason) });
      // Promoting it later runs the check again and fails the same way.
      const promoted = await postRelease(project, { commitSha: commit });
      expect(promoted.status).toBe(502);
      expect((await promoted.json()).error).toMatchObject({ code: "delivery_check_failed", message: expect.stringMatching(reason) });
      expect(await manifestOf(await requestUpdate(project))).toEqual(live);
    }
    expect((await listBundles(project)).bundles.find((bundle: { commitSha: string }) => bundle.commitSha === "7777777a")).toMatchObject({ live: true, deliveryError: null });
  });
});

describe("response structures (accept)", () => {
  let project: Project;
  let manifest: UpdateManifest;

  beforeAll(async () => {
    project = await newProject("Accept");
    manifest = await storeBundle(project, "9999999a", { seed: 13 });
  });

  it("answers the manifest alone as JSON to a client that accepts only application/expo+json or application/json", async () => {
    for (const accept of ["application/expo+json", "application/json", "application/expo+json;q=0.9, multipart/mixed;q=0.1"]) {
      const response = await requestUpdate(project, { accept });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get("content-type"), accept).toBe(`${accept.split(/[;,]/)[0]}; charset=utf-8`);
      expect(response.headers.get("expo-protocol-version")).toBe("1");
      expect(await response.json()).toEqual(manifest);
    }
  });

  it("answers 406 when the accepted structures cannot carry the answer: a directive without multipart, or nothing the protocol knows", async () => {
    for (const headers of [
      { accept: "application/expo+json", "expo-runtime-version": "0.0.1" } as Record<string, string>,
      { accept: "application/json", "expo-current-update-id": "00000000-0000-4000-8000-000000000000", "expo-channel-name": "none" },
      { accept: "text/html" },
      { accept: "multipart/mixed;q=0, application/expo+json;q=0" },
    ]) {
      const response = await requestUpdate(project, headers);
      expect(response.status, JSON.stringify(headers)).toBe(406);
      expect((await response.json()).error.code).toBe("not_acceptable");
    }
    // Multipart, or anything, gets the multipart answer.
    expect(await manifestOf(await requestUpdate(project, { accept: "*/*" }))).toEqual(manifest);
    expect(await manifestOf(await requestUpdate(project, { accept: "" }))).toEqual(manifest);
  });
});
