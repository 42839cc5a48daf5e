import type { Expression, JSXOpeningElement, Node, NewExpression, Program, Statement } from "@babel/types";
import { BACKEND_URL_VARIABLE } from "@/lib/app-names";
import { sameCode, walk } from "./ast";
import { ExistingProviderError, where, type SourceFile } from "./errors";
import type { ModuleScope } from "./scope";
import type { WrapperSnippet } from "./snippet";

/** Modules whose `…Provider` exports give the app its own Convex client (plain, auth, Clerk, Better Auth). */
const PROVIDER_MODULES = new Set(["convex/react", "@convex-dev/auth/react", "convex/react-clerk", "@convex-dev/better-auth/react"]);
const CLIENT_CLASS = "ConvexReactClient";

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
  const fromConvexModule = (name: string) => {
    const binding = scope.imports.get(name);
    return binding !== undefined && !binding.typeOnly && PROVIDER_MODULES.has(binding.source);
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
      const fromConvex = name !== null && name.endsWith("Provider") && fromConvexModule(name);
      if (fromConvex || receivesClient(node)) providers.push(node);
    });
  }
  return { clients, providers };
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
    throw manualFix(file, providers[0], `its \`${CLIENT_CLASS}\` is not created in this file, so the injector cannot check which URL it reads`);
  }
  const edits = new Map<number, { start: number; end: number; from: string }>();
  for (const { construction, declaration } of clients) {
    const [argument] = construction.arguments;
    const read = argument && argument.type !== "SpreadElement" && argument.type !== "ArgumentPlaceholder" ? unwrapTypes(argument) : null;
    const variable = read ? envReadName(read) : null;
    if (!read || variable === null) {
      const given = argument ? `\`${file.source.slice(argument.start!, argument.end!)}\`` : "no URL";
      throw manualFix(file, construction, `its \`${CLIENT_CLASS}\` is created from ${given} instead of an environment variable`);
    }
    if (variable === BACKEND_URL_VARIABLE) continue;
    // A guard such as `process.env.X ? new ConvexReactClient(process.env.X) : null` must test the same variable.
    walk(declaration, (node) => {
      if (node.type === "MemberExpression" && envReadName(node) === variable) edits.set(node.start!, { start: node.start!, end: node.end!, from: variable });
    });
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
