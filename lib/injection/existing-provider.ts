import type { Expression, JSXOpeningElement, Node, NewExpression, Program, Statement } from "@babel/types";
import { BACKEND_URL_VARIABLE } from "@/lib/app-names";
import { sameCode, walk } from "./ast";
import { ExistingProviderError, where, type SourceFile } from "./errors";
import type { ModuleScope } from "./scope";
import type { WrapperSnippet } from "./snippet";

/** Modules whose `…Provider` exports give the app its own Convex client (plain, auth, Clerk, Better Auth). */
const PROVIDER_MODULES = new Set(["convex/react", "@convex-dev/auth/react", "convex/react-clerk", "@convex-dev/better-auth/react"]);
/** The families those belong to (`convex/react-auth0`, other `@convex-dev/*` packages): their providers count when handed a `client`. */
const isConvexModule = (source: string) => source === "convex/react" || source.startsWith("convex/react-") || source.startsWith("@convex-dev/");
const CLIENT_CLASS = "ConvexReactClient";
/** `ConvexProvider`, `ConvexAuthProvider` and the `ConvexProviderWith…` family (Clerk, Auth0, a custom auth). */
const PROVIDER_NAME = /Provider(?:With\w+)?$/;

const constructsClient = (node: Node) => node.type === "NewExpression" && node.callee.type === "Identifier" && node.callee.name === CLIENT_CLASS;

/** The app's own provider, kept instead of injecting ours. */
export interface ExistingProvider {
  /** The layout, with the client's env read renamed when it was another variable. */
  code: string;
  /** What was changed, for the user; null when the client already read the right variable. */
  note: string | null;
}

function jsxName(element: JSXOpeningElement): string | null {
  return element.name.type === "JSXIdentifier" ? element.name.name : null;
}

/** The expression under TypeScript's `x!` and `x as T`, which do not change the value. */
function unwrapTypes(node: Expression): Expression {
  let current: Node = node;
  while (current.type === "TSNonNullExpression" || current.type === "TSAsExpression" || current.type === "TSSatisfiesExpression") {
    current = current.expression;
  }
  return current as Expression;
}

/** The variable name of a `process.env.X` or `process.env["X"]` read, or null. */
function envReadName(node: Expression): string | null {
  if (node.type !== "MemberExpression") return null;
  const { object, property } = node;
  const readsEnv =
    object.type === "MemberExpression" &&
    !object.computed &&
    object.object.type === "Identifier" &&
    object.object.name === "process" &&
    object.property.type === "Identifier" &&
    object.property.name === "env";
  if (!readsEnv) return null;
  if (!node.computed && property.type === "Identifier") return property.name;
  return node.computed && property.type === "StringLiteral" ? property.value : null;
}

/** Statements the injection itself added (an earlier run); their provider is ours, not the app's. */
function isInjected(statement: Statement, snippet: WrapperSnippet): boolean {
  return snippet.declarations.some(({ statement: ours }) => sameCode(statement, ours));
}

/**
 * The app's `new ConvexReactClient(…)` calls (with the variable declaration holding each, or the
 * call itself) and the JSX elements that are Convex providers, outside the code an earlier
 * injection added.
 */
function findAppProviders(program: Program, scope: ModuleScope, snippet: WrapperSnippet) {
  const fromConvexModule = (name: string, element: JSXOpeningElement) => {
    const binding = scope.imports.get(name);
    if (binding === undefined || binding.typeOnly) return false;
    return PROVIDER_MODULES.has(binding.source) || (isConvexModule(binding.source) && clientAttribute(element) !== null);
  };
  const appStatements = program.body.filter((statement) => !isInjected(statement, snippet));
  const clients: Array<{ construction: NewExpression; declaration: Node }> = [];
  for (const statement of appStatements) {
    walk(statement, (node, _slot, ancestors) => {
      if (!constructsClient(node)) return;
      const declaration = ancestors.findLast((ancestor) => ancestor.type === "VariableDeclarator") ?? node;
      clients.push({ construction: node as NewExpression, declaration });
    });
  }
  // Top-level variables holding a client, such as `const convex = new ConvexReactClient(…)`.
  const clientNames = new Set<string>();
  for (const [name, { declarator }] of scope.topLevel) {
    const init = declarator?.init;
    if (init && clients.some(({ construction }) => construction.start! >= init.start! && construction.end! <= init.end!)) clientNames.add(name);
  }
  const providers: JSXOpeningElement[] = [];
  // A component counts as a Convex provider when it comes from a Convex module or is handed a client.
  const receivesClient = (element: JSXOpeningElement) =>
    element.attributes.some(
      (attribute) =>
        attribute.type === "JSXAttribute" &&
        attribute.value?.type === "JSXExpressionContainer" &&
        attribute.value.expression.type !== "JSXEmptyExpression" &&
        ((attribute.value.expression.type === "Identifier" && clientNames.has(attribute.value.expression.name)) ||
          constructsClient(attribute.value.expression)),
    );
  for (const statement of appStatements) {
    walk(statement, (node) => {
      if (node.type !== "JSXOpeningElement") return;
      const name = jsxName(node);
      const fromConvex = name !== null && PROVIDER_NAME.test(name) && fromConvexModule(name, node);
      if (fromConvex || receivesClient(node)) providers.push(node);
    });
  }
  return { clients, providers };
}

/** The expression of a provider's `client={…}` attribute, or null. */
function clientAttribute(element: JSXOpeningElement): Expression | null {
  for (const attribute of element.attributes) {
    if (attribute.type !== "JSXAttribute" || attribute.name.type !== "JSXIdentifier" || attribute.name.name !== "client") continue;
    const value = attribute.value;
    return value?.type === "JSXExpressionContainer" && value.expression.type !== "JSXEmptyExpression" ? value.expression : null;
  }
  return null;
}

/** What a provider was handed when the file creates no client: said as it is, for the refusal. */
function describeForeignClient(file: SourceFile, scope: ModuleScope, provider: JSXOpeningElement): string {
  const client = clientAttribute(provider);
  const name = client?.type === "Identifier" ? client.name : null;
  const imported = name === null ? undefined : scope.imports.get(name);
  if (imported) return `its client \`${name}\` is imported from "${imported.source}", not created in this file`;
  const given = client ? ` \`${file.source.slice(client.start!, client.end!)}\`` : "";
  return `its client${given} is not created in this file`;
}

/**
 * The URL a client is created from, looking through TypeScript's wrappers, a `??`/`||` fallback
 * and a same-file `const` holding it (`const convexUrl = process.env.EXPO_PUBLIC_CONVEX_URL!`):
 * the env read, and the declarator of that const (its reads are renamed with the client's).
 */
function urlSource(argument: Expression, scope: ModuleScope): { read: Expression; constant: Node | null } {
  const through = (node: Expression): Expression => {
    const unwrapped = unwrapTypes(node);
    return unwrapped.type === "LogicalExpression" && unwrapped.operator !== "&&" ? unwrapTypes(unwrapped.left) : unwrapped;
  };
  const read = through(argument);
  if (read.type !== "Identifier") return { read, constant: null };
  const binding = scope.topLevel.get(read.name);
  const declaration = binding?.statement;
  const isConst = declaration?.type === "VariableDeclaration" && declaration.kind === "const";
  if (!isConst || !binding?.declarator?.init) return { read, constant: null };
  return { read: through(binding.declarator.init), constant: binding.declarator };
}

function manualFix(file: SourceFile, node: Node, problem: string): ExistingProviderError {
  return new ExistingProviderError(
    `${where(file, node)}: the layout already has its own Convex provider, and ${problem}. ` +
      `Create its client with \`new ${CLIENT_CLASS}(process.env.${BACKEND_URL_VARIABLE}!)\` in this file, then enable the backend again; ` +
      "a second client would override or be shadowed by the app's own.",
  );
}

/**
 * Detects a Convex provider the app already renders in its root layout (spec issue 23). Returns
 * null when there is none. Otherwise the app's provider is kept and no second client is added:
 * every `ConvexReactClient` of the layout must be created from `process.env.EXPO_PUBLIC_CONVEX_URL`,
 * and a plain `process.env.X` read of another variable is renamed (only those bytes change).
 * Pure: nothing is written.
 *
 * @throws ExistingProviderError (HTTP 409) when the client cannot be pointed at the variable safely
 */
export function findExistingProvider(
  program: Program,
  scope: ModuleScope,
  snippet: WrapperSnippet,
  file: SourceFile,
): ExistingProvider | null {
  const { clients, providers } = findAppProviders(program, scope, snippet);
  if (providers.length === 0) return null;
  if (clients.length === 0) {
    throw manualFix(file, providers[0], `${describeForeignClient(file, scope, providers[0])}, so the injector cannot check which URL it reads`);
  }
  const edits = new Map<number, { start: number; end: number; from: string }>();
  for (const { construction, declaration } of clients) {
    const [argument] = construction.arguments;
    const source = argument && argument.type !== "SpreadElement" && argument.type !== "ArgumentPlaceholder" ? urlSource(argument, scope) : null;
    const variable = source ? envReadName(source.read) : null;
    if (!source || variable === null) {
      const given = argument ? `\`${file.source.slice(argument.start!, argument.end!)}\`` : "no URL";
      const held = source?.constant ? ` (\`${file.source.slice(source.constant.start!, source.constant.end!)}\`)` : "";
      throw manualFix(file, construction, `its \`${CLIENT_CLASS}\` is created from ${given}${held}, which reads no environment variable`);
    }
    if (variable === BACKEND_URL_VARIABLE) continue;
    // A guard such as `process.env.X ? new ConvexReactClient(process.env.X) : null` must test the same variable.
    for (const holder of source.constant ? [declaration, source.constant] : [declaration]) {
      walk(holder, (node) => {
        if (node.type === "MemberExpression" && envReadName(node) === variable) edits.set(node.start!, { start: node.start!, end: node.end!, from: variable });
      });
    }
  }
  if (edits.size === 0) return { code: file.source, note: null };
  // Expo inlines only the dotted form, so the whole read is rewritten, not just the name.
  const code = [...edits.values()]
    .sort((a, b) => b.start - a.start)
    .reduce((text, edit) => `${text.slice(0, edit.start)}process.env.${BACKEND_URL_VARIABLE}${text.slice(edit.end)}`, file.source);
  const was = [...new Set([...edits.values()].map((edit) => `process.env.${edit.from}`))].join(", ");
  return {
    code,
    note: `${file.filename}: the app's ${CLIENT_CLASS} now reads process.env.${BACKEND_URL_VARIABLE} (was ${was}).`,
  };
}
