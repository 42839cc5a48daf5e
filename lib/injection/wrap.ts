import type { JSXElement, JSXText, Node, ReturnStatement } from "@babel/types";
import { nodeAt, replaceAt, walk, type Slot } from "./ast";
import { WRAPPER_COMPONENT } from "./snippet";
import { parseWithBabel, type Language, type SourceStyle } from "./syntax";

/**
 * Forgets that `node` was written in parentheses, on the node and on recast's copy of the parsed
 * original (`original`): recast then reuses the node's source text instead of reprinting it.
 */
function dropParentheses(node: Node): void {
  const original = (node as { original?: Node }).original;
  for (const version of [node, original]) {
    if (version?.extra?.parenthesized) version.extra = { ...version.extra, parenthesized: false };
  }
}

const NEWLINE: JSXText = { type: "JSXText", value: "\n" };
// recast keeps attached comments in `comments`; Babel's own fields are moved too for consistency.
const COMMENT_FIELDS = ["comments", "leadingComments", "trailingComments"] as const;

/**
 * A `// comment` before the target sits in expression position (`return ( // …`); left on the
 * target it would be printed inside the wrapper's children, where it becomes visible JSX text.
 */
function moveComments(from: Node, to: Node): void {
  const source = from as unknown as Record<string, unknown>;
  const target = to as unknown as Record<string, unknown>;
  for (const field of COMMENT_FIELDS) {
    if (source[field] === undefined) continue;
    target[field] = source[field];
    delete source[field];
  }
}

/**
 * Replaces the element in `slot` with `<BackendWrapper>{element}</BackendWrapper>`: on its own
 * lines when the element spans several lines (recast indents it), inline otherwise.
 * Returns the new wrapper element.
 */
export function wrapInBackendWrapper(slot: Slot, source: string): JSXElement {
  const target = nodeAt(slot) as JSXElement;
  const multiLine = source.slice(target.start ?? 0, target.end ?? 0).includes("\n");
  // Parentheses belong around the outer element now: `(<A/>)` inside JSX children would be text.
  const parenthesized = target.extra?.parenthesized === true;
  dropParentheses(target);
  const name = { type: "JSXIdentifier", name: WRAPPER_COMPONENT } as const;
  const wrapper: JSXElement = {
    type: "JSXElement",
    openingElement: { type: "JSXOpeningElement", name, attributes: [], selfClosing: false },
    closingElement: { type: "JSXClosingElement", name },
    children: multiLine ? [{ ...NEWLINE }, target, { ...NEWLINE }] : [target],
    ...(parenthesized ? { extra: { parenthesized: true } } : {}),
  };
  moveComments(target, wrapper);
  replaceAt(slot, wrapper);
  return wrapper;
}

const isWrapperElement = (node: Node) =>
  node.type === "JSXElement" && node.openingElement.name.type === "JSXIdentifier" && node.openingElement.name.name === WRAPPER_COMPONENT;

/** Every `return` with a `<BackendWrapper>` in its argument, in tree order; the same list before and after printing. */
function returnsWithWrapper(root: Node): ReturnStatement[] {
  const found: ReturnStatement[] = [];
  walk(root, (node) => {
    if (node.type !== "ReturnStatement" || !node.argument) return;
    let contains = false;
    walk(node.argument, (inner) => {
      contains ||= isWrapperElement(inner);
    });
    if (contains) found.push(node);
  });
  return found;
}

/**
 * recast reprints a whole `return` statement when anything inside it changes; a parenthesized
 * non-JSX argument (`return (\n  ready && (<A/>)\n)`) is then printed flat on one line. Without
 * those outer parentheses it patches just the changed element and keeps the layout, and the
 * argument still starts on the `return` line, so dropping them is safe. Returns the positions
 * (in returnsWithWrapper order) of the returns changed, for restoreReturnParentheses.
 */
export function relaxReturnParentheses(root: Node, wrappers: ReadonlySet<Node>): Set<number> {
  const relaxed = new Set<number>();
  returnsWithWrapper(root).forEach((statement, position) => {
    const argument = statement.argument!;
    if (!argument.extra?.parenthesized || argument.type === "JSXElement" || argument.type === "JSXFragment") return;
    let containsNewWrapper = false;
    walk(argument, (inner) => {
      containsNewWrapper ||= wrappers.has(inner);
    });
    if (!containsNewWrapper) return;
    dropParentheses(argument);
    relaxed.add(position);
  });
  return relaxed;
}

/**
 * Puts back, in the printed code, the parentheses relaxReturnParentheses dropped, as the author
 * wrote them: `(` ending the `return` line, the argument one level deeper, `)` on its own line.
 */
export function restoreReturnParentheses(code: string, language: Language, relaxed: ReadonlySet<number>, style: SourceStyle): string {
  if (relaxed.size === 0) return code;
  const arguments_ = returnsWithWrapper(parseWithBabel(code, language).program)
    .filter((_, position) => relaxed.has(position))
    .map((statement) => statement.argument!);
  const newline = style.lineTerminator;
  // From the end, so earlier offsets stay valid.
  return arguments_.reverse().reduce((text, argument) => {
    const lineStart = text.lastIndexOf("\n", argument.start! - 1) + 1;
    const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
    const lines = text.slice(argument.start!, argument.end!).split(newline);
    const deeper = lines.map((line, index) => (index > 0 && line.trim() !== "" ? style.indentUnit + line : line)).join(newline);
    return `${text.slice(0, argument.start!)}(${newline}${indent}${style.indentUnit}${deeper}${newline}${indent})${text.slice(argument.end!)}`;
  }, code);
}
