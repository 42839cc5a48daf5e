import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBlobStore } from "@/lib/blob";
import { createVercelBlobStore } from "@/lib/blob/drivers/vercel";
import { SANDBOX_CSP, serveBlob } from "@/lib/blob/serve";
import { fastBlobPathname } from "@/lib/blob/fast-path";
import { fetchThroughRoute, startFastPathServer } from "./route-client";

/** The answer, its body cancelled unread: as a client that hangs up, it closes the blob's file at once. */
async function unread(answer: Promise<Response>): Promise<Response> {
  const response = await answer;
  await response.body?.cancel();
  return response;
}

const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>';

const fastPath = startFastPathServer();
afterAll(async () => (await fastPath).close());

describe.each([
  ["the Next.js route handler", fetchThroughRoute],
  ["the fast path, over HTTP", async (url: string, init?: RequestInit) => (await fastPath).fetch(url, init)],
])("GET/HEAD /blob/[...pathname] (fs driver) through %s", (_, fetchThroughRoute) => {
  const store = getBlobStore();
  const urls: Record<string, string> = {};
  const big = crypto.randomBytes(3 * 1024 * 1024 + 17);

  beforeAll(async () => {
    const files: [string, string | Buffer][] = [
      ["route/hello.txt", "hello, world"],
      ["route/logo.svg", SVG],
      ["route/page.html", "<h1>hi</h1>"],
      ["route/feed.xml", "<feed/>"],
      ["route/photo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47])],
      ["route/big.bin", big],
      ["route/empty.txt", ""],
    ];
    for (const [pathname, body] of files) {
      urls[pathname] = (await store.put(pathname, body, { access: "public", allowOverwrite: true })).url;
    }
  });

  it("streams the bytes with type, length, validators, caching and nosniff", async () => {
    const response = await fetchThroughRoute(urls["route/hello.txt"]);
    const head = await store.head("route/hello.txt");
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "text/plain",
      "content-length": "12",
      etag: head!.etag,
      "last-modified": head!.uploadedAt.toUTCString(),
      "cache-control": "public, max-age=2592000",
      "x-content-type-options": "nosniff",
      "accept-ranges": "bytes",
      "content-disposition": 'inline; filename="hello.txt"',
      "cross-origin-resource-policy": "cross-origin",
    });
    expect(response.headers.get("content-security-policy")).toBeNull();
    expect(await response.text()).toBe("hello, world");
  });

  it("serves a multi-megabyte blob byte for byte", async () => {
    const response = await fetchThroughRoute(urls["route/big.bin"]);
    expect(response.headers.get("content-length")).toBe(String(big.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(big)).toBe(true);
  });

  it("serves an empty blob with Content-Length 0", async () => {
    const response = await fetchThroughRoute(urls["route/empty.txt"]);
    expect([response.status, response.headers.get("content-length"), await response.text()]).toEqual([200, "0", ""]);
  });

  it("sandboxes script-capable types (SVG, HTML, XML) and leaves images alone", async () => {
    for (const pathname of ["route/logo.svg", "route/page.html", "route/feed.xml"]) {
      const response = await unread(fetchThroughRoute(urls[pathname]));
      expect([pathname, response.headers.get("content-security-policy")]).toEqual([pathname, SANDBOX_CSP]);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const svg = await fetchThroughRoute(urls["route/logo.svg"]);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(await svg.text()).toBe(SVG);
    expect((await unread(fetchThroughRoute(urls["route/page.html"]))).headers.get("content-disposition")).toMatch(/^attachment/);
    expect((await unread(fetchThroughRoute(urls["route/photo.png"]))).headers.get("content-security-policy")).toBeNull();
  });

  it("answers 304 to a matching If-None-Match and 200 to a stale one", async () => {
    const { etag } = (await store.head("route/hello.txt"))!;
    const fresh = await fetchThroughRoute(urls["route/hello.txt"], { headers: { "if-none-match": `"stale", ${etag}` } });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.get("etag")).toBe(etag);
    expect(await fresh.text()).toBe("");
    const stale = await unread(fetchThroughRoute(urls["route/hello.txt"], { headers: { "if-none-match": '"stale"' } }));
    expect(stale.status).toBe(200);
  });

  it("answers 304 to If-Modified-Since at or after the upload, unless If-None-Match disagrees", async () => {
    const { uploadedAt } = (await store.head("route/hello.txt"))!;
    const since = (offsetSeconds: number) => new Date(uploadedAt.getTime() + offsetSeconds * 1000).toUTCString();
    expect((await fetchThroughRoute(urls["route/hello.txt"], { headers: { "if-modified-since": since(0) } })).status).toBe(304);
    expect((await unread(fetchThroughRoute(urls["route/hello.txt"], { headers: { "if-modified-since": since(-60) } }))).status).toBe(200);
    const both = { "if-modified-since": since(60), "if-none-match": '"other"' };
    expect((await unread(fetchThroughRoute(urls["route/hello.txt"], { headers: both }))).status).toBe(200);
  });

  it("serves single byte ranges with 206 and Content-Range", async () => {
    const cases: [string, string, string][] = [
      ["bytes=0-4", "hello", "bytes 0-4/12"],
      ["bytes=7-", "world", "bytes 7-11/12"],
      ["bytes=-5", "world", "bytes 7-11/12"],
      ["bytes=7-1000", "world", "bytes 7-11/12"],
    ];
    for (const [range, body, contentRange] of cases) {
      const response = await fetchThroughRoute(urls["route/hello.txt"], { headers: { range } });
      expect([range, response.status, response.headers.get("content-range"), await response.text()]).toEqual([range, 206, contentRange, body]);
    }
  });

  it("answers 416 to a range past the end, and ignores multi-range and stale If-Range requests", async () => {
    const unsatisfiable = await fetchThroughRoute(urls["route/hello.txt"], { headers: { range: "bytes=12-20" } });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get("content-range")).toBe("bytes */12");
    expect((await unsatisfiable.json()).error.code).toBe("range_not_satisfiable");

    const multi = await fetchThroughRoute(urls["route/hello.txt"], { headers: { range: "bytes=0-1,4-5" } });
    expect([multi.status, await multi.text()]).toEqual([200, "hello, world"]);

    const staleIfRange = await fetchThroughRoute(urls["route/hello.txt"], { headers: { range: "bytes=0-4", "if-range": '"old"' } });
    expect([staleIfRange.status, await staleIfRange.text()]).toEqual([200, "hello, world"]);
    const { etag } = (await store.head("route/hello.txt"))!;
    const currentIfRange = await unread(fetchThroughRoute(urls["route/hello.txt"], { headers: { range: "bytes=0-4", "if-range": etag } }));
    expect(currentIfRange.status).toBe(206);
  });

  it("answers HEAD with the headers and no body", async () => {
    const response = await fetchThroughRoute(urls["route/big.bin"], { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(big.length));
    expect(await response.text()).toBe("");
  });

  it("turns ?download=1 into an attachment", async () => {
    const { downloadUrl } = (await store.head("route/photo.png"))!;
    const response = await unread(fetchThroughRoute(downloadUrl));
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="photo.png"');
  });

  it("answers a JSON 404 for missing blobs", async () => {
    const response = await fetchThroughRoute(urls["route/hello.txt"].replace("hello.txt", "missing.txt"));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "blob_not_found", message: "No blob exists at this address." } });
  });

  it("serves the new version after an overwrite and 404 after a delete", async () => {
    expect(await (await fetchThroughRoute(urls["route/hello.txt"])).text()).toBe("hello, world");
    await store.put("route/changing.txt", "first", { access: "public", allowOverwrite: true });
    const url = (await store.put("route/changing.txt", "second", { access: "public", allowOverwrite: true })).url;
    expect(await (await fetchThroughRoute(url)).text()).toBe("second");
    await store.del(url);
    expect((await fetchThroughRoute(url)).status).toBe(404);
  });
});

describe("serveBlob", () => {
  const store = getBlobStore();

  it("answers a JSON 404 for missing blobs and impossible pathnames", async () => {
    for (const pathname of ["route/missing.txt", "route/../hello.txt"]) {
      const response = await serveBlob(new Request(`http://localhost/blob/${pathname}`), store, pathname);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { code: "blob_not_found", message: "No blob exists at this address." } });
    }
  });

  it("answers 404 when blobs live with another driver", async () => {
    const response = await serveBlob(new Request("http://localhost/blob/route/hello.txt"), createVercelBlobStore(), "route/hello.txt");
    expect(response.status).toBe(404);
  });
});

describe("the blob fast path", () => {
  it("takes blob paths as the route's catch-all receives them and leaves redirects and malformed escapes to Next.js", () => {
    expect(fastBlobPathname("/blob/a/b%20c.png")).toBe("a/b c.png");
    expect(fastBlobPathname("/blob/a%2Fb")).toBe("a/b");
    for (const path of ["/api/blob/x", "/blob/", "/blob/a/", "/blob/a//b", "/blob/a/../b", "/blob/./a", "/blob/%zz"]) {
      expect([path, fastBlobPathname(path)]).toEqual([path, null]);
    }
  });

  it("keeps serving after a client leaves in the middle of a multi-megabyte body", async () => {
    const { fetch } = await fastPath;
    const url = (await getBlobStore().head("route/big.bin"))!.url;
    for (let i = 0; i < 5; i++) {
      const response = await fetch(url);
      const reader = response.body!.getReader();
      await reader.read();
      await reader.cancel();
    }
    const whole = await fetch(url);
    expect((await whole.arrayBuffer()).byteLength).toBe(3 * 1024 * 1024 + 17);
  });

  it("leaves other methods and paths to Next.js", async () => {
    const { fetch } = await fastPath;
    expect((await fetch("http://localhost/blob/route/hello.txt", { method: "POST" })).status).toBe(501);
    expect((await fetch("http://localhost/api/health")).status).toBe(501);
  });
});
