import type { ImportDeclaration, ImportSpecifier, Statement } from "@babel/types";
import { walk } from "./ast";
import { parseForEditing, parseWithBabel, type Language, type SourceStyle } from "./syntax";
import { readWrapperTemplate } from "./templates";

/** The component the layout's JSX is wrapped in; the template must declare it. */
export const WRAPPER_COMPONENT = "BackendWrapper";

/** A top-level declaration of the snippet and the one name it binds. */
export interface SnippetDeclaration {
  name: string;
  statement: Statement;
}

/** The wrapper snippet, shaped for one layout file. */
export interface WrapperSnippet {
  /** Module the client and provider are imported from. */
  importSource: string;
  /** Named imports the snippet uses (imported and local names are the same). */
  importNames: string[];
  /** Fresh nodes, ready to splice into the layout, in template order. */
  declarations: SnippetDeclaration[];
}

const TEMPLATE_NAME = "templates/backend/layout-wrapper.tsx";
const TYPE_ONLY_FIELDS = new Set(["typeAnnotation", "returnType", "typeParameters"]);

function declaredName(statement: Statement): string {
  if (statement.type === "FunctionDeclaration" && statement.id) return statement.id.name;
  if (statement.type === "VariableDeclaration" && statement.declarations[0]?.id.type === "Identifier") {
    return statement.declarations[0].id.name;
  }
  throw new Error(`${TEMPLATE_NAME}: every statement after the import must declare one name.`);
}

/** Re-indents (the template uses 2 spaces) and drops line-ending semicolons for semicolon-free files. */
function restyle(code: string, style: SourceStyle): string {
  return code
    .split("\n")
    .map((line) => {
      const spaces = /^ */.exec(line)![0].length;
      const body = line.slice(spaces);
      const indented = style.indentUnit.repeat(Math.floor(spaces / 2)) + " ".repeat(spaces % 2) + body;
      return style.semicolons ? indented : indented.replace(/;(\s*)$/, "$1");
    })
    .join("\n");
}

/** Text ranges of the type annotations in `statements`, for JavaScript layouts. */
function typeAnnotationRanges(statements: Statement[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const statement of statements) {
    walk(statement, (node, slot) => {
      if (!slot || !TYPE_ONLY_FIELDS.has(slot.key)) return;
      ranges.push([node.start!, node.end!]);
      return false;
    });
  }
  return ranges;
}

/**
 * Builds the snippet for a layout: the template's code after its import, in the layout's style,
 * without type annotations for JavaScript layouts. Every call returns new nodes.
 */
export function buildWrapperSnippet(language: Language, style: SourceStyle): WrapperSnippet {
  const template = readWrapperTemplate();
  const body = parseWithBabel(template, "ts").program.body;
  const importDeclaration = body.find((statement): statement is ImportDeclaration => statement.type === "ImportDeclaration");
  const code = body.filter((statement) => statement.type !== "ImportDeclaration");
  if (!importDeclaration || code.length === 0) throw new Error(`${TEMPLATE_NAME} must hold one import followed by code.`);
  const codeStart = Math.min(code[0].start!, ...(code[0].leadingComments ?? []).map((comment) => comment.start!));

  // Cut from the end so earlier offsets stay valid.
  const cuts = language === "js" ? typeAnnotationRanges(code).sort((a, b) => b[0] - a[0]) : [];
  const text = cuts.reduce((current, [start, end]) => current.slice(0, start) + current.slice(end), template).slice(codeStart);
  // The blank lines around the code become the blank lines around it in the layout (recast keeps them).
  const parsed = parseForEditing(`\n\n${restyle(text.trim(), style)}\n\n`, language, TEMPLATE_NAME);
  const declarations = parsed.program.body.map((statement) => ({ name: declaredName(statement), statement }));
  if (!declarations.some((declaration) => declaration.name === WRAPPER_COMPONENT)) {
    throw new Error(`${TEMPLATE_NAME} must declare ${WRAPPER_COMPONENT}.`);
  }
  return {
    importSource: importDeclaration.source.value,
    importNames: importDeclaration.specifiers.map((specifier) => specifier.local.name),
    declarations,
  };
}

/** A new `import { … } from "<source>"` statement in the layout's quote and semicolon style. */
export function buildImport(source: string, names: string[], style: SourceStyle): ImportDeclaration {
  const quote = style.quote === "single" ? "'" : '"';
  const text = `import { ${names.join(", ")} } from ${quote}${source}${quote}${style.semicolons ? ";" : ""}\n\n`;
  const [statement] = parseForEditing(text, "js", TEMPLATE_NAME).program.body;
  return statement as ImportDeclaration;
}

/** Named import specifiers (`{ name }`) to append to an existing import of the snippet's module. */
export function buildImportSpecifiers(names: string[]): ImportSpecifier[] {
  return names.map((name) => ({
    type: "ImportSpecifier",
    imported: { type: "Identifier", name },
    local: { type: "Identifier", name },
  }));
}
