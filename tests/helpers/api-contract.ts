import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { openApiDocument } from "@/lib/api-contract/document";

/**
 * Checks an answer of our /api against the OpenAPI document: the operation must be in the
 * document, and the body must match the schema of its status (or the `default` one). tests/setup.ts
 * runs it on every answer of a handler wrapped by `route()`, so every route test validates; the
 * dashboard browser test runs it on every /api answer the page received from the real server.
 */

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<unknown, ValidateFunction>();

type Operation = { responses: Record<string, { content?: Record<string, { schema?: object }> }> };

function findOperation(method: string, pathname: string): Operation | undefined {
  const { paths = {} } = openApiDocument();
  for (const [template, item] of Object.entries(paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    const operation = (item as Record<string, Operation | undefined>)[method.toLowerCase()];
    if (operation && pattern.test(pathname)) return operation;
  }
  return undefined;
}

function validatorFor(schema: object): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    // The document's components travel with the schema, so its `#/components/…` references resolve.
    validate = ajv.compile({ ...schema, components: openApiDocument().components });
    validators.set(schema, validate);
  }
  return validate;
}

export async function assertMatchesApiContract(request: Request, response: Response): Promise<void> {
  const { pathname } = new URL(request.url);
  // The document covers /api; the OAuth pages (/backend/…) and /blob answer browsers, not the builder.
  if (request.method === "HEAD" || !pathname.startsWith("/api/")) return;
  const where = `${request.method} ${pathname} → ${response.status}`;
  const operation = findOperation(request.method, pathname);
  if (!operation) throw new Error(`API contract: ${request.method} ${pathname} is not in the OpenAPI document (lib/api-contract/document.ts).`);
  const documented = operation.responses[String(response.status)] ?? operation.responses.default;
  if (documented && !documented.content && response.body === null) return;
  if (!documented?.content) throw new Error(`API contract: ${where} is not documented.`);
  const contentType = (response.headers.get("content-type") ?? "").split(";")[0].trim();
  const media = documented.content[contentType];
  if (!media) throw new Error(`API contract: ${where} answered ${contentType || "no content type"}; the document says ${Object.keys(documented.content).join(", ")}.`);
  if (contentType !== "application/json" || !media.schema) return;
  const body: unknown = await response.clone().json();
  const validate = validatorFor(media.schema);
  if (!validate(body)) {
    throw new Error(`API contract: ${where} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
}
