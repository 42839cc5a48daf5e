// A dependency-free preview of the app for sandboxes where Expo is not installed yet: renders
// the home screen's texts as a static page and serves the files under assets/ and public/.
// `npx expo start` replaces it once dependencies are installed. Port: $PORT (default 8081).
import { createServer } from "node:http";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = await realpath(path.dirname(fileURLToPath(import.meta.url)));
const port = Number(process.env.PORT || 8081);
const STATIC_DIRS = new Set(["assets", "public"]);
const CONTENT_TYPES = {
  ".css": "text/css; charset=utf-8",
  ".gif": "image/gif",
  ".html": "text/html; charset=utf-8",
  ".ico": "image/x-icon",
  ".jpeg": "image/jpeg",
  ".jpg": "image/jpeg",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".mp3": "audio/mpeg",
  ".mp4": "video/mp4",
  ".otf": "font/otf",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
  ".wav": "audio/wav",
  ".webm": "video/webm",
  ".webp": "image/webp",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
};

const escapeHtml = (text) =>
  text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char]);

async function appName() {
  try {
    return JSON.parse(await readFile(path.join(root, "app.json"), "utf8")).expo?.name || "App";
  } catch {
    return "App";
  }
}

/** Literal texts of the home screen's <Text> elements, read fresh on every request. */
async function screenTexts() {
  const source = await readFile(path.join(root, "app", "index.tsx"), "utf8").catch(() => "");
  return [...source.matchAll(/<Text\b[^>]*>([^<{]+)<\/Text>/g)].map((match) => match[1].trim()).filter(Boolean);
}

async function renderPage() {
  const [name, texts] = await Promise.all([appName(), screenTexts()]);
  const [title = name, ...rest] = texts;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(name)}</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, -apple-system, sans-serif; }
  body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; }
  header { padding: 14px 16px; font-weight: 600; border-bottom: 1px solid #8884; text-align: center; }
  main { flex: 1; display: flex; flex-direction: column; align-items: center; justify-content: center; gap: 12px; padding: 24px; text-align: center; }
  h1 { font-size: 28px; margin: 0; }
  p { font-size: 16px; margin: 0; opacity: 0.7; }
</style>
</head>
<body>
<header>${escapeHtml(name)}</header>
<main>
<h1>${escapeHtml(title)}</h1>
${rest.map((text) => `<p>${escapeHtml(text)}</p>`).join("\n")}
</main>
</body>
</html>
`;
}

/** The real path of a file inside a static directory, or null (missing, outside, not there). */
async function staticFile(pathname) {
  const relative = decodeURIComponent(pathname).replace(/^\/+/, "");
  const top = relative.split("/")[0];
  if (!STATIC_DIRS.has(top) || relative.includes("\0")) return null;
  const [dir, file] = await Promise.all(
    [path.join(root, top), path.join(root, relative)].map((candidate) => realpath(candidate).catch(() => null)),
  );
  return dir && file && file.startsWith(dir + path.sep) ? file : null;
}

function send(response, status, type, body, headOnly) {
  response.writeHead(status, { "content-type": type, "content-length": body.length, "x-content-type-options": "nosniff" });
  response.end(headOnly ? undefined : body);
}

const server = createServer(async (request, response) => {
  const headOnly = request.method === "HEAD";
  try {
    if (request.method !== "GET" && !headOnly) return send(response, 405, "text/plain", Buffer.from("Method not allowed\n"), false);
    const { pathname } = new URL(request.url ?? "/", "http://preview.invalid");
    if (pathname === "/" || pathname === "/index.html") {
      return send(response, 200, CONTENT_TYPES[".html"], Buffer.from(await renderPage()), headOnly);
    }
    const file = await staticFile(pathname);
    const body = file && (await readFile(file).catch(() => null));
    if (!body) return send(response, 404, "text/plain", Buffer.from("Not found\n"), headOnly);
    return send(response, 200, CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream", body, headOnly);
  } catch (error) {
    const status = error instanceof URIError ? 400 : 500;
    return send(response, status, "text/plain", Buffer.from(`${status === 400 ? "Bad request" : "Internal error"}\n`), headOnly);
  }
});

server.listen(port, () => console.log(`Preview server ready at http://localhost:${port}`));
