import { describe, expect, it } from "vitest";
import { EgressRefusedError, isReachableAddress, resolvePublicAddress } from "@/packages/sandbox-local/src/wall/address-policy";
import { machineAddress } from "./wall-fixture";

describe("the egress proxy's address policy", () => {
  it("refuses loopback, private, shared, link-local, multicast and reserved IPv4", () => {
    for (const address of ["127.0.0.1", "127.255.0.9", "0.0.0.0", "10.255.255.53", "100.64.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.168.1.1", "224.0.0.1", "255.255.255.255"]) {
      expect(isReachableAddress(address), address).toBe(false);
    }
  });

  it("refuses IPv6 loopback, unspecified, ULA, link-local, multicast, IPv4-mapped and NAT64", () => {
    for (const address of ["::1", "::", "fd00::2", "fc00::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "64:ff9b::a00:1"]) {
      expect(isReachableAddress(address), address).toBe(false);
    }
  });

  it("refuses this machine's own addresses and the network it sits on", () => {
    const own = machineAddress();
    expect(isReachableAddress(own)).toBe(false);
    const neighbour = own.split(".").slice(0, 3).concat(own.endsWith(".1") ? "2" : "1").join(".");
    expect(isReachableAddress(neighbour)).toBe(false);
  });

  it("allows public addresses, and refuses names and literals that resolve to forbidden ones", async () => {
    for (const address of ["8.8.8.8", "104.16.0.35", "2606:4700::6810:123"]) expect(isReachableAddress(address), address).toBe(true);
    for (const host of ["localhost", "127.0.0.1", "[::1]", "2130706433", "not an address"]) {
      await expect(resolvePublicAddress(host), host).rejects.toBeInstanceOf(Error);
    }
    await expect(resolvePublicAddress("localhost")).rejects.toBeInstanceOf(EgressRefusedError);
    expect(await resolvePublicAddress("8.8.8.8")).toBe("8.8.8.8");
  });
});
