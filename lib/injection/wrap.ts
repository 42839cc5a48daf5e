import type { JSXElement, JSXText, Node } from "@babel/types";
import { nodeAt, replaceAt, walk, type Slot } from "./ast";
import { WRAPPER_COMPONENT } from "./snippet";

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

/**
 * recast reprints a whole `return` statement when anything inside it changes; a parenthesized
 * non-JSX argument (`return (\n  ready && (<A/>)\n)`) is then printed flat on one line. Without
 * those outer parentheses it patches just the changed element and keeps the layout, and the
 * argument still starts on the `return` line, so dropping them is safe.
 */
export function relaxReturnParentheses(root: Node, wrappers: ReadonlySet<Node>): void {
  walk(root, (node) => {
    if (node.type !== "ReturnStatement" || !node.argument?.extra?.parenthesized) return;
    if (node.argument.type === "JSXElement" || node.argument.type === "JSXFragment") return;
    let containsWrapper = false;
    walk(node.argument, (inner) => {
      containsWrapper ||= wrappers.has(inner);
    });
    if (containsWrapper) dropParentheses(node.argument);
  });
}
