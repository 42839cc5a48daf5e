import { getMultipartBoundary, parseMultipart, type MultipartPart } from "@remix-run/multipart-parser";
import { expect } from "vitest";
import { GET as updatesRoute } from "@/app/api/projects/[id]/updates/route";
import type { UpdateManifest } from "@/lib/bundles/manifest";

/** The runtime version of the template app (templates/app/app.json), which the tests' bundles carry. */
export const RUNTIME = "1.0.0";

/** A manifest request to a project's update URL as expo-updates makes it; a header set to "" is left out. */
export function requestUpdate(projectId: string, headers: Record<string, string> = {}): Promise<Response> {
  const defaults = { "expo-protocol-version": "1", "expo-platform": "ios", "expo-runtime-version": RUNTIME, accept: "multipart/mixed,application/expo+json,application/json" };
  const merged = Object.fromEntries(Object.entries({ ...defaults, ...headers }).filter(([, value]) => value !== ""));
  return updatesRoute(new Request(`http://localhost:3000/api/projects/${projectId}/updates`, { headers: merged }), { params: Promise.resolve({ id: projectId }) });
}

/** The response checked against the protocol's headers, then its parts parsed by a multipart parser. */
export async function partsOf(response: Response): Promise<MultipartPart[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get("expo-protocol-version")).toBe("1");
  expect(response.headers.get("expo-sfv-version")).toBe("0");
  expect(response.headers.get("cache-control")).toBe("private, max-age=0");
  const contentType = response.headers.get("content-type") ?? "";
  expect(contentType).toMatch(/^multipart\/mixed; boundary=/);
  const boundary = getMultipartBoundary(contentType);
  expect(boundary).toBeTruthy();
  const parts = [...parseMultipart(new Uint8Array(await response.arrayBuffer()), { boundary: boundary! })];
  for (const part of parts) {
    expect(part.headers["content-type"]).toBe("application/json; charset=utf-8");
    // The protocol: `content-disposition: inline; name="<part>"` (expo-updates reads the name from it).
    expect(part.headers["content-disposition"]).toBe(`inline; name="${part.name}"`);
  }
  return parts;
}

export const partNamed = (parts: MultipartPart[], name: string) => parts.find((part) => part.name === name);

/** The directive of a response that must be one. */
export async function directiveOf(response: Response) {
  const parts = await partsOf(response);
  expect(parts.map((part) => part.name)).toEqual(["directive"]);
  return JSON.parse(parts[0].text);
}

/** The manifest of a response that must be one, with its `extensions` part. */
export async function manifestOf(response: Response): Promise<UpdateManifest> {
  const parts = await partsOf(response);
  expect(parts.map((part) => part.name)).toEqual(["manifest", "extensions"]);
  expect(JSON.parse(partNamed(parts, "extensions")!.text)).toEqual({ assetRequestHeaders: {} });
  return JSON.parse(partNamed(parts, "manifest")!.text);
}
