import fs from "node:fs";
import { createRequire } from "node:module";
import ts from "typescript";

/**
 * Convex's management and deployment OpenAPI documents, rebuilt from what npm installs:
 * `@convex-dev/platform` ships the `paths`, `operations` and `components` types that
 * openapi-typescript generated from them. This reads those declarations (syntax only, no type
 * checker: milliseconds) and turns them back into the parts of an OpenAPI document the contract
 * check uses: each operation's parameters, request body and responses, with JSON Schemas.
 *
 * What the types cannot say is restored by rule: `Format: int64/int32` comments make a number an
 * integer; request bodies are closed (a field the types do not name is refused, as Convex refuses
 * unknown fields of its `*Args`), answers stay open (a server may add fields).
 */

type JsonSchema = Record<string, unknown>;

interface OpenApiParameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: JsonSchema;
}

interface OpenApiOperation {
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  /** `schemas` for answers; `requestSchemas` the same types closed, for request bodies. */
  components: { schemas: Record<string, JsonSchema>; requestSchemas: Record<string, JsonSchema> };
}

/** The package's own entry points of each API; their declarations sit beside them. */
const ENTRY_POINTS = { management: "@convex-dev/platform/managementApi", deployment: "@convex-dev/platform/deploymentApi" } as const;

/** The document of one API, from the installed `@convex-dev/platform`. */
export function platformDocument(api: keyof typeof ENTRY_POINTS): OpenApiDocument {
  const file = createRequire(import.meta.url).resolve(ENTRY_POINTS[api]).replace(/\.c?js$/, ".d.ts");
  return documentFromTypes(file, fs.readFileSync(file, "utf8"));
}

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** The OpenAPI document whose openapi-typescript output is `text`. */
function documentFromTypes(fileName: string, text: string): OpenApiDocument {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const unsupported = (node: ts.Node, what: string) =>
    new Error(`${fileName}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what} (${ts.SyntaxKind[node.kind]}): the contract check cannot read this type yet`);

  const interfaceMembers = (name: string): ts.NodeArray<ts.TypeElement> => {
    const declaration = source.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === name);
    if (!declaration) throw new Error(`${fileName}: no interface ${name}`);
    return declaration.members;
  };
  const memberName = (member: ts.TypeElement): string => {
    if (!member.name || !(ts.isIdentifier(member.name) || ts.isStringLiteral(member.name) || ts.isNumericLiteral(member.name))) throw unsupported(member, "member name");
    return member.name.text;
  };
  const properties = (members: readonly ts.TypeElement[]) =>
    members.filter((member): member is ts.PropertySignature => ts.isPropertySignature(member)).map((member) => ({ name: memberName(member), optional: Boolean(member.questionToken), type: member.type!, format: formatOf(member) }));
  /** The members of a type literal, seen through parentheses; undefined for `never`. */
  const literalMembers = (node: ts.TypeNode): ts.NodeArray<ts.TypeElement> | undefined => {
    if (node.kind === ts.SyntaxKind.NeverKeyword) return undefined;
    if (ts.isParenthesizedTypeNode(node)) return literalMembers(node.type);
    if (!ts.isTypeLiteralNode(node)) throw unsupported(node, "expected an object type");
    return node.members;
  };
  const formatOf = (node: ts.Node): string | undefined => {
    const comments = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
    return comments.map((range) => /Format: (\w+)/.exec(text.slice(range.pos, range.end))?.[1]).find(Boolean);
  };

  const schemaTypes = new Map(properties(literalMembers(properties(interfaceMembers("components")).find((member) => member.name === "schemas")!.type)!).map((entry) => [entry.name, entry]));
  /** `components["schemas"]["X"]` → X. */
  const componentName = (node: ts.TypeNode): string | undefined => {
    if (!ts.isIndexedAccessTypeNode(node) || !ts.isLiteralTypeNode(node.indexType) || !ts.isStringLiteral(node.indexType.literal)) return undefined;
    const outer = node.objectType;
    if (!ts.isIndexedAccessTypeNode(outer) || !ts.isTypeReferenceNode(outer.objectType) || outer.objectType.getText() !== "components") return undefined;
    return node.indexType.literal.text;
  };
  /** An intersection's parts as object members: references to components are followed. */
  const intersectionMembers = (node: ts.TypeNode): ts.TypeElement[] => {
    if (ts.isParenthesizedTypeNode(node)) return intersectionMembers(node.type);
    const component = componentName(node);
    if (component) return intersectionMembers(schemaTypes.get(component)!.type);
    if (ts.isTypeLiteralNode(node)) return [...node.members];
    throw unsupported(node, "intersection part");
  };

  const objectSchema = (members: readonly ts.TypeElement[], closed: boolean): JsonSchema => {
    const fields = properties(members);
    const index = members.find(ts.isIndexSignatureDeclaration);
    const schema: JsonSchema = { type: "object", properties: Object.fromEntries(fields.map((field) => [field.name, convert(field.type, closed, field.format)])) };
    const required = fields.filter((field) => !field.optional).map((field) => field.name);
    if (required.length > 0) schema.required = required;
    if (index) schema.additionalProperties = convert(index.type, closed);
    else if (closed) schema.additionalProperties = false;
    return schema;
  };

  const convert = (node: ts.TypeNode, closed: boolean, format?: string): JsonSchema => {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: "string" };
      case ts.SyntaxKind.NumberKeyword:
        return { type: format === "int64" || format === "int32" ? "integer" : "number" };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: "boolean" };
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.AnyKeyword:
        return {};
      case ts.SyntaxKind.NeverKeyword:
        return { not: {} };
    }
    if (ts.isParenthesizedTypeNode(node)) return convert(node.type, closed, format);
    if (ts.isLiteralTypeNode(node)) {
      if (node.literal.kind === ts.SyntaxKind.NullKeyword) return { type: "null" };
      if (node.literal.kind === ts.SyntaxKind.TrueKeyword) return { const: true };
      if (node.literal.kind === ts.SyntaxKind.FalseKeyword) return { const: false };
      if (ts.isStringLiteral(node.literal)) return { const: node.literal.text };
      if (ts.isNumericLiteral(node.literal)) return { const: Number(node.literal.text) };
      if (ts.isPrefixUnaryExpression(node.literal) && ts.isNumericLiteral(node.literal.operand)) return { const: -Number(node.literal.operand.text) };
    }
    if (ts.isUnionTypeNode(node)) return { anyOf: node.types.map((member) => convert(member, closed, format)) };
    if (ts.isArrayTypeNode(node)) return { type: "array", items: convert(node.elementType, closed, format) };
    if (ts.isTypeLiteralNode(node)) return objectSchema(node.members, closed);
    if (ts.isIntersectionTypeNode(node)) return objectSchema(node.types.flatMap(intersectionMembers), closed);
    const component = componentName(node);
    if (component) return { $ref: `#/components/${closed ? "requestSchemas" : "schemas"}/${component}` };
    // openapi-typescript's spelling of a bare `type: object`.
    if (ts.isTypeReferenceNode(node) && node.getText() === "Record<string, never>") return { type: "object" };
    throw unsupported(node, "type");
  };

  const content = (node: ts.TypeNode, closed: boolean) => {
    const members = literalMembers(node);
    return members && Object.fromEntries(properties(members).map((entry) => [entry.name, { schema: convert(entry.type, closed, entry.format) }]));
  };
  const operationTypes = new Map(properties(interfaceMembers("operations")).map((entry) => [entry.name, entry.type]));
  const operation = (node: ts.TypeNode): OpenApiOperation => {
    if (!ts.isIndexedAccessTypeNode(node) || !ts.isLiteralTypeNode(node.indexType) || !ts.isStringLiteral(node.indexType.literal)) throw unsupported(node, "operation");
    const parts = new Map(properties(literalMembers(operationTypes.get(node.indexType.literal.text)!)!).map((entry) => [entry.name, entry]));
    const parameters: OpenApiParameter[] = [];
    for (const group of properties(literalMembers(parts.get("parameters")!.type)!)) {
      const members = literalMembers(group.type);
      if (!members) continue;
      if (group.name !== "path" && group.name !== "query") throw unsupported(group.type, `${group.name} parameters`);
      for (const parameter of properties(members)) parameters.push({ name: parameter.name, in: group.name, required: !parameter.optional, schema: convert(parameter.type, false, parameter.format) });
    }
    const request = parts.get("requestBody");
    const requestMembers = request && literalMembers(request.type);
    const requestContent = requestMembers && content(properties(requestMembers).find((entry) => entry.name === "content")!.type, true);
    const responses = Object.fromEntries(
      properties(literalMembers(parts.get("responses")!.type)!).map((response) => {
        const body = properties(literalMembers(response.type)!).find((entry) => entry.name === "content");
        return [response.name, { content: body && content(body.type, false) }];
      }),
    );
    return { parameters, ...(requestContent && { requestBody: { required: !request.optional, content: requestContent } }), responses };
  };

  const paths = Object.fromEntries(
    properties(interfaceMembers("paths")).map((item) => [
      item.name,
      Object.fromEntries(
        properties(literalMembers(item.type)!)
          .filter((entry) => HTTP_METHODS.has(entry.name) && entry.type.kind !== ts.SyntaxKind.NeverKeyword)
          .map((entry) => [entry.name, operation(entry.type)]),
      ),
    ]),
  );
  const components = (closed: boolean) => Object.fromEntries([...schemaTypes.values()].map((entry) => [entry.name, convert(entry.type, closed, entry.format)]));
  return { paths, components: { schemas: components(false), requestSchemas: components(true) } };
}
