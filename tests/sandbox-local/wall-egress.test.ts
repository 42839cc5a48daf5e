import path from "node:path";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { EGRESS_PROXY_PORT } from "@/packages/sandbox-local/src/wall";
import { machineAddress, outputOf, SANDBOX_ENV, serviceOnAllInterfaces, wallScratch } from "./wall-fixture";

const scratch = wallScratch("wall-egress");
const FORWARDED_PORT = 3210;

/**
 * From inside a sandbox with egress "registry": the real npm client through the proxy, then
 * attempts on this machine through the proxy and around it. Outcomes are printed as JSON.
 */
const PROBE = String.raw`
const http = require("node:http");
const net = require("node:net");
const { execFileSync } = require("node:child_process");
const [port, machine, proxyPort, forwardedPort] = process.argv.slice(2);
function viaConnect(authority) {
  return new Promise((resolve) => {
    http.request({ host: "127.0.0.1", port: Number(proxyPort), method: "CONNECT", path: authority })
      .on("connect", (response, socket) => { socket.destroy(); resolve(response.statusCode); })
      .on("error", (error) => resolve(error.code))
      .end();
  });
}
function viaForward(url) {
  return new Promise((resolve) => {
    http.get({ host: "127.0.0.1", port: Number(proxyPort), path: url }, (response) => { response.resume(); resolve(response.statusCode); })
      .on("error", (error) => resolve(error.code));
  });
}
function direct(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port), timeout: 20000 });
    socket.on("connect", () => { socket.destroy(); resolve("connected"); });
    socket.on("error", (error) => resolve(error.code));
    socket.on("timeout", () => { socket.destroy(); resolve("TIMEOUT"); });
  });
}
function get(url) {
  return new Promise((resolve) => {
    http.get(url, (response) => { let body = ""; response.on("data", (d) => (body += d)); response.on("end", () => resolve(body)); })
      .on("error", (error) => resolve(error.code));
  });
}
(async () => {
  const results = {};
  try { results.npm = execFileSync("npm", ["view", "react", "version"], { encoding: "utf8", timeout: 90000 }).trim(); }
  catch (error) { results.npm = "failed: " + error.message; }
  results.connectLoopback = await viaConnect("127.0.0.1:443");
  results.connectLocalhostName = await viaConnect("localhost:443");
  results.connectMachine = await viaConnect(machine + ":443");
  results.connectMappedLoopback = await viaConnect("[::ffff:127.0.0.1]:443");
  results.connectNameServer = await viaConnect("10.255.255.53:443");
  results.connectMetadata = await viaConnect("169.254.169.254:80");
  results.connectOtherPort = await viaConnect("8.8.8.8:25");
  results.forwardOtherPort = await viaForward("http://8.8.8.8:8080/");
  results.forwardMachine = await viaForward("http://" + machine + "/");
  results.forwardLoopback = await viaForward("http://127.0.0.1/");
  results.directLoopback = await direct("127.0.0.1", port);
  results.directMachine = await direct(machine, port);
  results.forwarded = await get("http://127.0.0.1:" + forwardedPort + "/");
  results.env = process.env;
  console.log(JSON.stringify(results));
})();
`;

const servicePort = serviceOnAllInterfaces("the project's own deployment");

describe("the sandbox wall's egress", () => {
  it("reaches the npm registry through the proxy, and nothing of this machine through it or around it", async () => {
    const serverPort = await servicePort;
    const spec = scratch.spec("egress", {
      egress: "registry",
      forwards: [{ port: FORWARDED_PORT, target: { host: "127.0.0.1", port: serverPort } }],
    });
    fs.writeFileSync(path.join(spec.home, "probe.js"), PROBE);
    const sandbox = await scratch.start(
      ["node", "/home/user/probe.js", String(serverPort), machineAddress(), String(EGRESS_PROXY_PORT), String(FORWARDED_PORT)],
      spec,
    );
    const { stdout, stderr, exit } = await outputOf(sandbox);
    expect(exit, stderr).toEqual({ code: 0, signal: null });
    const results = JSON.parse(stdout);

    // The real npm client, configured only by the proxy variables the wall sets.
    expect(results.npm).toMatch(/^\d+\.\d+\.\d+$/);
    // The proxy refuses (403: before connecting; a failed attempt would be 502) this machine, loopback (by address, by name, IPv4-mapped), private and link-local ranges.
    expect(results.connectLoopback).toBe(403);
    expect(results.connectLocalhostName).toBe(403);
    expect(results.connectMachine).toBe(403);
    expect(results.connectMappedLoopback).toBe(403);
    expect(results.connectNameServer).toBe(403);
    expect(results.connectMetadata).toBe(403);
    expect(results.forwardMachine).toBe(403);
    // A public address, but not HTTP(S): the proxy is no general TCP relay.
    expect(results.connectOtherPort).toBe(403);
    expect(results.forwardOtherPort).toBe(403);
    expect(results.forwardLoopback).toBe(403);
    // Around the proxy there is no route at all.
    expect(results.directLoopback).toBe("ECONNREFUSED");
    expect(results.directMachine).toBe("ENETUNREACH");
    // A loopback forward reaches exactly its target.
    expect(results.forwarded).toBe("the project's own deployment");
    const proxy = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
    expect(results.env).toEqual({
      ...SANDBOX_ENV,
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      npm_config_proxy: proxy,
      npm_config_https_proxy: proxy,
      NO_PROXY: "localhost,127.0.0.1",
      no_proxy: "localhost,127.0.0.1",
    });
  });
});
