import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";

/**
 * The `fetch` of pushed actions, made by the server for the runner (which has no network): only to
 * addresses a deployment could reach outside this machine. The name is resolved first and every
 * address checked; the connection then goes to a checked address, so a name that resolves
 * differently on the second lookup cannot lead it back inside. Redirects are followed hop by hop
 * through the same check.
 */

export interface OutboundRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: Uint8Array | null;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

export type OutboundAnswer = { ok: true; response: OutboundResponse } | { ok: false; errorMessage: string };

/** Largest response body handed to an action. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const MAX_REDIRECTS = 20;
/** A connection that stays silent this long is given up (the action's own limit is longer). */
const SOCKET_TIMEOUT_MS = 120_000;

/** Ranges that are not "outside this machine": loopback, private, shared, link-local, multicast, unspecified. */
const INTERNAL_RANGES = (() => {
  const list = new net.BlockList();
  for (const [prefix, bits] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 3]] as const) {
    list.addSubnet(prefix, bits, "ipv4");
  }
  for (const [prefix, bits] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) {
    list.addSubnet(prefix, bits, "ipv6");
  }
  return list;
})();

/** Why an address may not be reached from an action, or null when it may. */
export function refusedAddress(address: string): string | null {
  // An IPv4 address written as IPv6 is checked as what it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  const family = net.isIPv4(plain) ? "ipv4" : "ipv6";
  if (INTERNAL_RANGES.check(plain, family)) return `${address} is a loopback, private or link-local address`;
  const own = Object.values(os.networkInterfaces()).flat().some((entry) => entry?.address === plain);
  if (own) return `${address} is an address of this machine`;
  return null;
}

/** The checked address to connect to for `hostname`: the first resolved, once all resolved ones passed. */
async function checkedAddress(hostname: string): Promise<{ address: string; family: 4 | 6 }> {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  const resolved = net.isIP(bare) ? [{ address: bare, family: net.isIP(bare) }] : await dns.lookup(bare, { all: true });
  if (resolved.length === 0) throw new Error(`${hostname} did not resolve`);
  for (const { address } of resolved) {
    const reason = refusedAddress(address);
    if (reason) throw new Error(`connecting to ${hostname} is not allowed: ${reason}`);
  }
  return { address: resolved[0].address, family: resolved[0].family === 6 ? 6 : 4 };
}

type LookupCallback = (error: Error | null, address: string | { address: string; family: number }[], family?: number) => void;

/** One request to one checked address; the response as it came (redirects not followed). */
async function requestOnce(url: URL, request: OutboundRequest): Promise<OutboundResponse> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${url.protocol} URLs are not supported`);
  const target = await checkedAddress(url.hostname);
  // The connection resolves the name through this lookup: to the address checked above, nothing else.
  const lookup = (_hostname: string, options: { all?: boolean }, callback: LookupCallback) =>
    options.all ? callback(null, [target]) : callback(null, target.address, target.family);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request(url, { method: request.method, headers: request.headers.flat(), lookup, timeout: SOCKET_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) response.destroy(new Error(`the response is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB`));
        else chunks.push(chunk);
      });
      response.once("error", reject);
      response.once("end", () => {
        const headers: [string, string][] = [];
        for (let index = 0; index < response.rawHeaders.length; index += 2) headers.push([response.rawHeaders[index], response.rawHeaders[index + 1]]);
        resolve({ status: response.statusCode ?? 502, statusText: response.statusMessage ?? "", headers, body: new Uint8Array(Buffer.concat(chunks)) });
      });
    });
    outgoing.once("timeout", () => outgoing.destroy(new Error("the connection timed out")));
    outgoing.once("error", reject);
    outgoing.end(request.body ?? undefined);
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Makes an action's request, following redirects as fetch does; an error answers what was refused or failed. */
export async function outboundFetch(request: OutboundRequest): Promise<OutboundAnswer> {
  try {
    let current = request;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const response = await requestOnce(new URL(current.url), current);
      const location = response.headers.find(([name]) => name.toLowerCase() === "location")?.[1];
      if (!REDIRECTS.has(response.status) || !location) return { ok: true, response };
      // 303, and 301/302 of a POST, continue as a GET without body, as fetch does.
      const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && current.method === "POST");
      current = { ...current, url: new URL(location, current.url).href, ...(asGet && { method: "GET", body: null }) };
    }
    return { ok: false, errorMessage: "too many redirects" };
  } catch (error) {
    return { ok: false, errorMessage: error instanceof Error ? error.message : String(error) };
  }
}
