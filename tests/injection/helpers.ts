import { parse, type ParserPlugin } from "@babel/parser";
import type { File, JSXElement, JSXMemberExpression, Node } from "@babel/types";

/** Parses like the app's bundler would: TypeScript + JSX for .tsx, JSX only for .jsx/.js. */
export function parseLayout(code: string, filename: string): File {
  const plugins: ParserPlugin[] = filename.endsWith(".tsx") ? ["jsx", "typescript"] : ["jsx"];
  return parse(code, { sourceType: "module", plugins });
}

const IGNORED_KEYS = new Set(["loc", "start", "end", "range", "extra", "comments", "leadingComments", "trailingComments", "innerComments"]);
const INJECTED_IMPORTS = new Set(["ConvexProvider", "ConvexReactClient"]);
const INJECTED_DECLARATIONS = new Set(["backendClient", "BackendWrapper"]);

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

/** React's JSX whitespace rule: indentation and line breaks between elements render nothing. */
function renderedText(value: string): string {
  const lines = value.split(/\r\n|\n|\r/);
  return lines
    .map((line, i) => {
      let text = line.replace(/\t/g, " ");
      if (i > 0) text = text.trimStart();
      if (i < lines.length - 1) text = text.trimEnd();
      return text;
    })
    .filter((text) => text.length > 0)
    .join(" ");
}

function isBackendWrapper(node: Node): node is JSXElement {
  return node.type === "JSXElement" && node.openingElement.name.type === "JSXIdentifier" && node.openingElement.name.name === "BackendWrapper";
}

function meaningfulChildren(element: JSXElement): Node[] {
  return element.children.filter((child) => child.type !== "JSXText" || renderedText(child.value) !== "");
}

/**
 * A comparable form of a module with everything the injection adds taken out again: the
 * convex/react import names, `backendClient`, `BackendWrapper`, and every `<BackendWrapper>`
 * replaced by its child. Positions, comments, parentheses and non-rendering JSX whitespace are
 * ignored. A wrapper with anything but exactly one child (stray text, a comment turned into
 * text) is kept, so the comparison fails.
 */
export function withoutInjection(file: File): unknown {
  const body = file.program.body.flatMap((statement) => {
    if (statement.type === "ImportDeclaration" && statement.source.value === "convex/react") {
      const specifiers = statement.specifiers.filter((specifier) => !INJECTED_IMPORTS.has(specifier.local.name));
      return specifiers.length > 0 ? [{ ...statement, specifiers }] : [];
    }
    if (statement.type === "FunctionDeclaration" && INJECTED_DECLARATIONS.has(statement.id?.name ?? "")) return [];
    if (statement.type === "VariableDeclaration") {
      const [first] = statement.declarations;
      if (first?.id.type === "Identifier" && INJECTED_DECLARATIONS.has(first.id.name)) return [];
    }
    return [statement];
  });
  return normalize({ ...file.program, body });
}

function normalize(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(isNode(item) && item.type === "JSXText" && renderedText(item.value) === ""))
      .map(normalize);
  }
  if (!isNode(value)) return value;
  if (isBackendWrapper(value)) {
    const children = meaningfulChildren(value);
    if (children.length === 1) return normalize(children[0]);
  }
  if (value.type === "JSXText") return { type: "JSXText", text: renderedText(value.value) };
  const entries = Object.entries(value).filter(([key, field]) => !IGNORED_KEYS.has(key) && field !== undefined);
  return Object.fromEntries(entries.map(([key, field]) => [key, normalize(field)]));
}

function jsxName(name: JSXElement["openingElement"]["name"] | JSXMemberExpression["object"]): string {
  if (name.type === "JSXIdentifier") return name.name;
  if (name.type === "JSXMemberExpression") return `${jsxName(name.object)}.${name.property.name}`;
  return `${name.namespace.name}:${name.name.name}`;
}

function elementName(node: Node): string {
  if (node.type === "JSXFragment") return "<>";
  return node.type === "JSXElement" ? jsxName(node.openingElement.name) : node.type;
}

/** Names of the elements directly inside each `<BackendWrapper>` of the layout, in source order. */
export function wrappedElements(file: File): string[] {
  const names: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isNode(value)) return;
    if (isBackendWrapper(value)) names.push(...meaningfulChildren(value).map(elementName));
    for (const [key, field] of Object.entries(value)) if (!IGNORED_KEYS.has(key)) visit(field);
  };
  visit(file.program);
  return names;
}
