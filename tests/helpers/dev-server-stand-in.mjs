// Stand-in for the app's dev servers in the test files that exercise what the service does around
// them (start, stop, restart, roles, ports, restore) rather than what they serve: Metro and the
// convex CLI cost seconds of CPU per start. `app` answers an HTML page on $PORT as the preview URL
// shows once Metro's bundle ran (content in #root, so a screenshot of it is taken at once);
// `backend` reports a push as the CLI does, then stays up quietly. The
// files that prove the real toolchains import tests/helpers/real-dev-servers.ts, and every user
// path runs the real commands.
import http from "node:http";

const role = process.argv[2];
if (role === "app") {
  const page = '<!doctype html><html><head><title>app</title></head><body><div id="root"><p>app</p></div></body></html>';
  http
    .createServer((request, response) => {
      const found = request.url === "/";
      response.writeHead(found ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
      response.end(found ? page : "");
    })
    .listen(Number(process.env.PORT), () => console.log(`app dev server stand-in on port ${process.env.PORT}`));
} else if (role === "backend") {
  // The CLI's first push outcome: enable waits for it before restarting the app dev server.
  console.log("✔ 12:00:00 Convex functions ready! (0.1s)");
  setInterval(() => undefined, 1 << 30);
} else {
  console.error(`usage: dev-server-stand-in.mjs app|backend (got ${role})`);
  process.exit(2);
}
