// A fixed batch of requests from a process of its own (bench/http-load.ts `runBatch`): for large
// bodies, where wrk's fixed duration would cut requests off mid-body. Plain JavaScript run by node.
//   node bench/batch-client.mjs '<json>'   with origin, path, method, headers, bodyFiles,
//                                         connections, perConnection
// Each connection sends its requests one after the other, the n-th connection the n-th body file
// (streamed from disk); prints one JSON line: elapsed ms, each request's ms, failures.
import fs from "node:fs";
import http from "node:http";
import { pipeline } from "node:stream/promises";

const options = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });

function send(bodyFile) {
  return new Promise((resolve) => {
    const request = http.request(
      `${options.origin}${options.path}`,
      { agent, method: options.method, headers: { ...options.headers, "content-length": fs.statSync(bodyFile).size } },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode < 400));
      },
    );
    request.on("error", () => resolve(false));
    pipeline(fs.createReadStream(bodyFile), request).catch(() => resolve(false));
  });
}

const latencies = [];
let failures = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: options.connections }, async (_, connection) => {
    for (let i = 0; i < options.perConnection; i++) {
      const start = performance.now();
      if (!(await send(options.bodyFiles[connection % options.bodyFiles.length]))) failures++;
      latencies.push(performance.now() - start);
    }
  }),
);
console.log(JSON.stringify({ ms: performance.now() - started, latencies, failures }));
agent.destroy();
