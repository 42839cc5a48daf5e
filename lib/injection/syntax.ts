import path from "node:path";
import { parse as babelParse, type ParserPlugin } from "@babel/parser";
import type { File, Program, Statement } from "@babel/types";
import * as recast from "recast";
import { InjectionError } from "./errors";

/** `ts` layouts get type annotations in injected code; `js` layouts get none. */
export type Language = "ts" | "js";

/** Formatting habits of a file, detected so injected code looks like the user's own. */
export interface SourceStyle {
  quote: "single" | "double";
  semicolons: boolean;
  /** One level of indentation: a tab or some spaces. */
  indentUnit: string;
  lineTerminator: string;
}

const LANGUAGE_BY_EXTENSION: Record<string, Language> = { ".tsx": "ts", ".jsx": "js", ".js": "js" };

/** The layout's language from its file name; `.ts` and others cannot hold JSX, so they are refused. */
export function languageOf(filename: string): Language {
  const language = LANGUAGE_BY_EXTENSION[path.extname(filename).toLowerCase()];
  if (!language) {
    throw new InjectionError(
      "layout_unsupported_file",
      `${filename} is not a .tsx, .jsx or .js file, so it cannot render JSX; the wrapper was not injected.`,
    );
  }
  return language;
}

function parserPlugins(language: Language): ParserPlugin[] {
  return language === "ts" ? ["jsx", "typescript"] : ["jsx"];
}

/** Plain Babel parse (no recast bookkeeping); throws Babel's SyntaxError. */
export function parseWithBabel(source: string, language: Language): File {
  return babelParse(source, { sourceType: "module", plugins: parserPlugins(language), tokens: true });
}

/**
 * Parses for editing: recast keeps the original text of every node it does not have to reprint,
 * so formatting and comments survive. A syntax error becomes `layout_parse_error`.
 */
export function parseForEditing(source: string, language: Language, filename: string): File {
  try {
    return recast.parse(source, {
      parser: { parse: (code: string) => parseWithBabel(code, language) },
      // Must match the printing tab width, or recast re-indents tab-indented lines.
      tabWidth: tabWidthOf(detectIndentUnit(source)),
    }) as File;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new InjectionError("layout_parse_error", `${filename} does not parse (${reason}); fix the syntax error first.`, {
      cause: error,
    });
  }
}

/** Prints an edited tree, reusing original text where possible and `style` for new code. */
export function printEdited(ast: File, style: SourceStyle): string {
  return recast.print(ast, {
    quote: style.quote,
    useTabs: style.indentUnit === "\t",
    tabWidth: tabWidthOf(style.indentUnit),
    lineTerminator: style.lineTerminator,
  }).code;
}

function tabWidthOf(indentUnit: string): number {
  return indentUnit === "\t" ? 4 : indentUnit.length;
}

/** Detects quotes and semicolons from the top-level statements and the indentation unit from the text. */
export function detectStyle(source: string, program: Program): SourceStyle {
  const firstImport = program.body.find((statement) => statement.type === "ImportDeclaration");
  const raw = firstImport?.type === "ImportDeclaration" ? String(firstImport.source.extra?.raw ?? "") : "";
  return {
    quote: raw.startsWith("'") ? "single" : "double",
    semicolons: usesSemicolons(source, program.body),
    indentUnit: detectIndentUnit(source),
    lineTerminator: source.includes("\r\n") ? "\r\n" : "\n",
  };
}

// Statements whose last character is a semicolon exactly when the author writes semicolons.
const SEMICOLON_TERMINATED = new Set(["ImportDeclaration", "VariableDeclaration", "ExpressionStatement"]);

function usesSemicolons(source: string, body: Statement[]): boolean {
  let withSemicolon = 0;
  let without = 0;
  for (const statement of body) {
    if (!SEMICOLON_TERMINATED.has(statement.type) || statement.end == null) continue;
    if (source[statement.end - 1] === ";") withSemicolon += 1;
    else without += 1;
  }
  return withSemicolon >= without;
}

function detectIndentUnit(source: string): string {
  let tabLines = 0;
  let smallestSpaces = Infinity;
  for (const line of source.split(/\r?\n/)) {
    const indent = /^[ \t]+(?=\S)/.exec(line)?.[0];
    // JSDoc continuation lines (" * text") are aligned, not indented.
    if (!indent || line.trimStart().startsWith("*")) continue;
    if (indent.startsWith("\t")) tabLines += 1;
    else if (indent.length >= 2) smallestSpaces = Math.min(smallestSpaces, indent.length);
  }
  if (tabLines > 0 && smallestSpaces === Infinity) return "\t";
  return " ".repeat(smallestSpaces === Infinity ? 2 : Math.min(smallestSpaces, 8));
}
