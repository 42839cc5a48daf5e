import { openApiDocument } from "./document";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

type Operation = {
  summary?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
};

/** JSON with every object or array that fits on a short line kept on one line. */
function compactJson(value: unknown, indent = ""): string {
  const flat = JSON.stringify(value);
  if (flat.length <= 72 || value === null || typeof value !== "object") return flat;
  const inner = `${indent}  `;
  const items = Array.isArray(value)
    ? value.map((item) => inner + compactJson(item, inner))
    : Object.entries(value).map(([key, item]) => `${inner}${JSON.stringify(key)}: ${compactJson(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return `${open}\n${items.join(",\n")}\n${indent}${close}`;
}

const anchorOf = (method: string, path: string) => `op-${method}-${path.replace(/[^\w]+/g, "-")}`;

const schemaBlock = (schema: unknown) =>
  `<pre>${escapeHtml(compactJson(schema)).replace(/&#34;#\/components\/schemas\/(\w+)&#34;/g, '<a href="#schema-$1">"#/components/schemas/$1"</a>')}</pre>`;

const contentBlocks = (content: Record<string, { schema?: unknown }> = {}) =>
  Object.entries(content)
    .map(([mediaType, { schema }]) => `<p class="media">${escapeHtml(mediaType)}</p>${schema ? schemaBlock(schema) : ""}`)
    .join("");

function operationSection(path: string, method: string, operation: Operation): string {
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === "query").map((parameter) => parameter.name);
  const responses = Object.entries(operation.responses)
    .map(([status, response]) => `<h4>${escapeHtml(status)}</h4>${contentBlocks(response.content)}`)
    .join("");
  return `<section class="operation" id="${anchorOf(method, path)}"><h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(operation.summary ?? "")}${operation.security?.length === 0 ? " <em>(public)</em>" : ""}</p>
${query.length ? `<p>Query: ${query.map((name) => `<code>${escapeHtml(name)}</code>`).join(", ")}</p>` : ""}
${operation.requestBody ? `<h4>Request body</h4>${contentBlocks(operation.requestBody.content)}` : ""}${responses}</section>`;
}

/**
 * GET /api/docs: the OpenAPI document as a readable page, rendered on the server from the
 * document itself (no script, nothing fetched from elsewhere, so it works offline).
 */
export function apiDocsPage(): string {
  const document = openApiDocument();
  const entries = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({ path, method, operation })),
  );
  const contents = entries.map(
    ({ path, method, operation }) =>
      `<li><a href="#${anchorOf(method, path)}"><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></a> ${escapeHtml(operation.summary ?? "")}</li>`,
  );
  const operations = entries.map(({ path, method, operation }) => operationSection(path, method, operation));
  const schemas = Object.entries(document.components?.schemas ?? {}).map(
    ([name, schema]) => `<section class="operation" id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>${schemaBlock(schema)}</section>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="/icon.svg">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1c1c1c}
.operation{border:1px solid #e4e4e7;border-radius:8px;padding:.25rem 1rem;margin:1rem 0}
.method{font:600 12px ui-monospace,monospace;padding:2px 6px;border-radius:4px;background:#e4e4e7}
.get{background:#dbeafe}.post{background:#dcfce7}.patch{background:#fef3c7}.delete{background:#fee2e2}.put{background:#ede9fe}
.contents{list-style:none;padding:0}.contents li{margin:.2rem 0}.contents a{text-decoration:none}
pre{background:#f7f7f8;padding:.5rem;border-radius:6px;overflow:auto;font-size:12px}.media{color:#6b7280;margin:.25rem 0}
</style></head><body><h1>${escapeHtml(document.info.title)}</h1>
<p>${escapeHtml(document.info.description ?? "")} Machine-readable: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI ${escapeHtml(document.openapi)}).
Every route takes the session cookie or <code>Authorization: Bearer &lt;token&gt;</code> unless marked public.</p>
<h2>Operations</h2><ul class="contents">${contents.join("\n")}</ul>${operations.join("\n")}<h2>Schemas</h2>${schemas.join("\n")}</body></html>`;
}
