import type { ArrowFunctionExpression, Expression, FunctionDeclaration, FunctionExpression, Node, Program } from "@babel/types";
import { isFunctionLike, walk, type Slot } from "./ast";
import { InjectionError, where, type SourceFile } from "./errors";
import type { ModuleScope, TopLevelBinding } from "./scope";

/** A function component whose returns can be analysed. */
export type ComponentFunction = FunctionDeclaration | FunctionExpression | ArrowFunctionExpression;

// Wrappers that change nothing at runtime: `x as T`, `x!`, `x satisfies T`, `<T>x`.
const TRANSPARENT = new Set(["TSAsExpression", "TSSatisfiesExpression", "TSNonNullExpression", "TSTypeAssertion"]);
const MAX_RESOLVE_DEPTH = 5;

/** The layout being analysed: its names, plus its name and text for messages. */
export interface LayoutContext extends SourceFile {
  scope: ModuleScope;
}

function excerpt(node: Node, source: string): string {
  const text = source.slice(node.start ?? 0, node.end ?? 0).replace(/\s+/g, " ");
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function unsupported(context: LayoutContext, node: Node, what: string): InjectionError {
  return new InjectionError(
    "layout_unsupported_export",
    `${where(context, node)}: the default export is ${what}, not a function component defined in this file; ` +
      "add <BackendWrapper> by hand.",
  );
}

/** The function or value a top-level name is bound to (the bare declarator for `let X;`). */
function definitionOf(binding: TopLevelBinding): Node {
  if (binding.declarator) return binding.declarator.init ?? binding.declarator;
  const { statement } = binding;
  return "declaration" in statement && statement.declaration ? statement.declaration : statement;
}

/** Follows identifiers, HOC calls (`memo(X)`, `Sentry.wrap(X)`) and type assertions to a function. */
function resolveComponent(expression: Node, context: LayoutContext, depth: number): ComponentFunction {
  if (depth > MAX_RESOLVE_DEPTH) throw unsupported(context, expression, "defined through too many indirections");
  if (TRANSPARENT.has(expression.type)) {
    return resolveComponent((expression as { expression: Expression }).expression, context, depth + 1);
  }
  switch (expression.type) {
    case "FunctionDeclaration":
    case "FunctionExpression":
    case "ArrowFunctionExpression":
      if (expression.async || expression.generator) throw unsupported(context, expression, "an async or generator function");
      return expression;
    case "Identifier": {
      const local = context.scope.topLevel.get(expression.name);
      if (local) return resolveComponent(definitionOf(local), context, depth + 1);
      const imported = context.scope.imports.get(expression.name);
      throw unsupported(context, expression, imported ? `\`${expression.name}\` imported from "${imported.source}"` : `\`${expression.name}\``);
    }
    case "CallExpression": {
      const inner = expression.arguments.find((argument) => argument.type === "Identifier" || isFunctionLike(argument));
      if (!inner) throw unsupported(context, expression, `the call \`${excerpt(expression, context.source)}\``);
      return resolveComponent(inner, context, depth + 1);
    }
    case "ClassDeclaration":
    case "ClassExpression":
      throw unsupported(context, expression, "a class component");
    default:
      throw unsupported(context, expression, `\`${excerpt(expression, context.source)}\``);
  }
}

/** The function component the layout default-exports; throws a clear InjectionError otherwise. */
export function findDefaultComponent(program: Program, context: LayoutContext): ComponentFunction {
  for (const statement of program.body) {
    if (statement.type === "ExportDefaultDeclaration") {
      return resolveComponent(statement.declaration, context, 0);
    }
    if (statement.type !== "ExportNamedDeclaration") continue;
    for (const specifier of statement.specifiers) {
      const exported = specifier.exported.type === "Identifier" ? specifier.exported.name : specifier.exported.value;
      if (exported !== "default") continue;
      if (statement.source || specifier.type !== "ExportSpecifier") throw unsupported(context, statement, "re-exported from another module");
      return resolveComponent(specifier.local, context, 0);
    }
  }
  throw new InjectionError(
    "layout_no_default_export",
    `${context.filename} has no default export; the root layout must default-export its component.`,
  );
}

/** Resolves `name` to a function component defined at the top level of this file, or null. */
export function findLocalComponent(name: string, context: LayoutContext): ComponentFunction | null {
  const binding = context.scope.topLevel.get(name);
  if (!binding) return null;
  try {
    return resolveComponent(definitionOf(binding), context, 1);
  } catch (error) {
    if (error instanceof InjectionError) return null;
    throw error;
  }
}

// Values that render nothing (or plain text): there is no tree to wrap.
function rendersNoTree(node: Node): boolean {
  return (
    node.type === "NullLiteral" ||
    node.type === "BooleanLiteral" ||
    node.type === "StringLiteral" ||
    node.type === "NumericLiteral" ||
    (node.type === "Identifier" && node.name === "undefined")
  );
}

function collectRendered(expression: Node, slot: Slot, context: LayoutContext, into: Slot[]): void {
  if (TRANSPARENT.has(expression.type)) {
    const inner = (expression as { expression: Expression }).expression;
    return collectRendered(inner, { parent: expression, key: "expression", index: null }, context, into);
  }
  switch (expression.type) {
    case "JSXElement":
    case "JSXFragment":
      into.push(slot);
      return;
    case "ConditionalExpression":
      collectRendered(expression.consequent, { parent: expression, key: "consequent", index: null }, context, into);
      return collectRendered(expression.alternate, { parent: expression, key: "alternate", index: null }, context, into);
    case "LogicalExpression":
      // `a && <X/>` renders only the right side's tree; `a || b` and `a ?? b` may render either.
      if (expression.operator !== "&&") collectRendered(expression.left, { parent: expression, key: "left", index: null }, context, into);
      return collectRendered(expression.right, { parent: expression, key: "right", index: null }, context, into);
    default:
      if (rendersNoTree(expression)) return;
      throw new InjectionError(
        "layout_unsafe_jsx",
        `${where(context, expression)}: the layout returns \`${excerpt(expression, context.source)}\`, which is not JSX, ` +
          "so there is no safe place for <BackendWrapper>; return JSX there or add the wrapper by hand.",
      );
  }
}

/**
 * The slots of every JSX element or fragment `component` can return: each return statement (nested
 * functions excluded) and each branch of `?:`, `&&`, `||`, `??`. Returns of null/false/undefined
 * are skipped; any other non-JSX return throws.
 */
export function renderedJsx(component: ComponentFunction, context: LayoutContext): Slot[] {
  const rendered: Slot[] = [];
  if (component.body.type !== "BlockStatement") {
    collectRendered(component.body, { parent: component, key: "body", index: null }, context, rendered);
  } else {
    walk(component.body, (node) => {
      if (isFunctionLike(node)) return false;
      if (node.type === "ReturnStatement" && node.argument) {
        collectRendered(node.argument, { parent: node, key: "argument", index: null }, context, rendered);
      }
    });
  }
  if (rendered.length === 0) {
    throw new InjectionError(
      "layout_unsafe_jsx",
      `${where(context, component)}: the component never returns JSX, so there is no place for <BackendWrapper>.`,
    );
  }
  return rendered;
}
