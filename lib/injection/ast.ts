import type { Node } from "@babel/types";

/** Where a node sits in its parent, so it can be replaced in place. */
export interface Slot {
  parent: Node;
  key: string;
  /** Position in the parent's array field; null when the field holds a single node. */
  index: number | null;
}

// Bookkeeping fields of Babel and recast, never child nodes (`original` is recast's copy of the tree).
const NON_CHILD_KEYS = new Set([
  "loc",
  "start",
  "end",
  "range",
  "extra",
  "tokens",
  "original",
  "comments",
  "leadingComments",
  "trailingComments",
  "innerComments",
]);

// TypeScript-only fields: they never change what renders, so structural comparison ignores them.
const TYPE_ONLY_KEYS = new Set(["typeAnnotation", "returnType", "typeParameters", "typeArguments"]);

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

function fields(node: Node): Record<string, unknown> {
  return node as unknown as Record<string, unknown>;
}

/** The child nodes of `node` with their slots, in source order of the fields. */
function children(node: Node): Array<{ node: Node; slot: Slot }> {
  const found: Array<{ node: Node; slot: Slot }> = [];
  for (const [key, value] of Object.entries(fields(node))) {
    if (NON_CHILD_KEYS.has(key)) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (isNode(item)) found.push({ node: item, slot: { parent: node, key, index } });
      });
    } else if (isNode(value)) {
      found.push({ node: value, slot: { parent: node, key, index: null } });
    }
  }
  return found;
}

/**
 * Depth-first walk. `visit` returns false to skip a node's children; `ancestors` runs from the
 * root to the parent of the visited node.
 */
export function walk(
  root: Node,
  visit: (node: Node, slot: Slot | null, ancestors: readonly Node[]) => boolean | void,
): void {
  const ancestors: Node[] = [];
  const step = (node: Node, slot: Slot | null) => {
    if (visit(node, slot, ancestors) === false) return;
    ancestors.push(node);
    for (const child of children(node)) step(child.node, child.slot);
    ancestors.pop();
  };
  step(root, null);
}

/** The node currently in `slot`. */
export function nodeAt(slot: Slot): Node {
  const value = fields(slot.parent)[slot.key];
  return (slot.index === null ? value : (value as Node[])[slot.index]) as Node;
}

/** Puts `replacement` into `slot`. */
export function replaceAt(slot: Slot, replacement: Node): void {
  const parent = fields(slot.parent);
  if (slot.index === null) parent[slot.key] = replacement;
  else (parent[slot.key] as Node[])[slot.index] = replacement;
}

/** True for functions and classes: their bodies are separate render scopes. */
export function isFunctionLike(node: Node): boolean {
  return (
    node.type === "FunctionDeclaration" ||
    node.type === "FunctionExpression" ||
    node.type === "ArrowFunctionExpression" ||
    node.type === "ObjectMethod" ||
    node.type === "ClassMethod" ||
    node.type === "ClassDeclaration" ||
    node.type === "ClassExpression"
  );
}

/**
 * Structural equality that ignores positions, comments, parentheses, quote style and type
 * annotations: two snippets are equal when they run the same code.
 */
export function sameCode(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameCode(item, b[i]));
  }
  if (isNode(a) || isNode(b)) {
    if (!isNode(a) || !isNode(b) || a.type !== b.type) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (NON_CHILD_KEYS.has(key) || TYPE_ONLY_KEYS.has(key)) continue;
      if (!sameCode(fields(a)[key], fields(b)[key])) return false;
    }
    return true;
  }
  // An absent field, null and false all mean "not set" (Babel writes either, depending on the plugins).
  return (a ?? false) === (b ?? false);
}
