import dns from "node:dns/promises";
import net from "node:net";
import os from "node:os";

/** Ranges a sandbox may never reach through the egress proxy: this machine, its networks and every non-public range. */
const FORBIDDEN_V4: Array<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const FORBIDDEN_V6: Array<[string, number]> = [
  ["::", 128],
  ["::1", 128],
  // IPv4-mapped and NAT64 addresses: they reach IPv4 ranges the list above forbids.
  ["::ffff:0:0", 96],
  ["64:ff9b::", 96],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
];

type Family = "ipv4" | "ipv6";

/**
 * One list per family: a BlockList matches IPv4 addresses against IPv6 rules through their
 * IPv4-mapped form, so ::ffff:0:0/96 in the same list would forbid every IPv4 address.
 */
function forbiddenList(family: Family): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix] of family === "ipv4" ? FORBIDDEN_V4 : FORBIDDEN_V6) list.addSubnet(address, prefix, family);
  // This machine's own addresses and the networks it sits on (the service and its peers may listen on 0.0.0.0).
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const info of addresses ?? []) {
      if ((info.family === "IPv4" ? "ipv4" : "ipv6") !== family) continue;
      list.addAddress(info.address, family);
      if (info.cidr) list.addSubnet(info.address, Number(info.cidr.split("/")[1]), family);
    }
  }
  return list;
}

/** Whether a sandbox may connect to this IP address. */
export function isReachableAddress(address: string): boolean {
  const family: Family | undefined = net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : undefined;
  return family !== undefined && !forbiddenList(family).check(address, family);
}

export class EgressRefusedError extends Error {
  constructor(host: string) {
    super(`egress refused: ${host} is not a public address`);
    this.name = "EgressRefusedError";
  }
}

/**
 * Resolves a destination here, outside the sandbox, and returns an address it may reach. Every
 * address the name resolves to must be public, so a name cannot mix a public and a private answer;
 * the caller connects to the returned address itself, so a second lookup cannot answer differently.
 */
export async function resolvePublicAddress(host: string): Promise<string> {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const answers = net.isIP(bare) ? [{ address: bare }] : await dns.lookup(bare, { all: true, verbatim: true });
  if (answers.length === 0 || !answers.every((answer) => isReachableAddress(answer.address))) throw new EgressRefusedError(host);
  return answers[0].address;
}
