import type { Node } from "@babel/types";
import { walk } from "./ast";
import { languageOf, parseWithBabel } from "./syntax";

/** `process.env.<name>` or `process.env["<name>"]`: the property node when `node` reads `name`. */
function envProperty(node: Node, name: string): Node | null {
  if (node.type !== "MemberExpression") return null;
  const { object, property } = node;
  const readsEnv =
    object.type === "MemberExpression" &&
    object.object.type === "Identifier" &&
    object.object.name === "process" &&
    !object.computed &&
    object.property.type === "Identifier" &&
    object.property.name === "env";
  if (!readsEnv) return null;
  if (!node.computed && property.type === "Identifier" && property.name === name) return property;
  if (node.computed && property.type === "StringLiteral" && property.value === name) return property;
  return null;
}

/**
 * Rewrites every `process.env.<from>` read in a module to `process.env.<to>`, touching only the
 * property names: every other byte stays. Pure; `changed` is false when nothing reads `from`.
 */
export function renameEnvReads(source: string, filename: string, from: string, to: string): { changed: boolean; code: string } {
  const ranges: Array<{ start: number; end: number; text: string }> = [];
  walk(parseWithBabel(source, languageOf(filename)).program, (node) => {
    const property = envProperty(node, from);
    if (!property) return;
    ranges.push({ start: property.start!, end: property.end!, text: property.type === "StringLiteral" ? JSON.stringify(to) : to });
  });
  // From the end, so earlier offsets stay valid.
  const code = ranges
    .sort((a, b) => b.start - a.start)
    .reduce((text, range) => text.slice(0, range.start) + range.text + text.slice(range.end), source);
  return { changed: ranges.length > 0, code };
}
