import type { Program, Statement } from "@babel/types";
import { walk } from "./ast";
import { findDefaultComponent } from "./component";
import { InjectionError } from "./errors";
import { findExistingProvider } from "./existing-provider";
import { restoreVerbatimRanges } from "./literals";
import { findMissingPieces, type MissingPieces } from "./presence";
import { analyseModule } from "./scope";
import { buildImport, buildImportSpecifiers, buildWrapperSnippet, WRAPPER_COMPONENT } from "./snippet";
import {
  detectStyle,
  languageOf,
  parseForEditing,
  parseWithBabel,
  printEdited,
  type Language,
  type SourceStyle,
} from "./syntax";
import { planWrapTargets } from "./targets";
import { relaxReturnParentheses, restoreReturnParentheses, wrapInBackendWrapper } from "./wrap";

/** Outcome of an injection: `code` is the new source, or the unchanged source when `changed` is false. */
export interface InjectionResult {
  changed: boolean;
  code: string;
  /** Set when the app's own Convex provider was kept and its client's env read was renamed. */
  note?: string;
}

/** Adds the missing import names and snippet declarations right after the last import. */
function insertMissingPieces(program: Program, importSource: string, missing: MissingPieces, style: SourceStyle): void {
  const added: Statement[] = [];
  if (missing.existingImport) missing.existingImport.specifiers.push(...buildImportSpecifiers(missing.importNames));
  else if (missing.importNames.length > 0) added.push(buildImport(importSource, missing.importNames, style));
  added.push(...missing.statements);
  if (added.length === 0) return;
  const lastImport = program.body.findLastIndex((statement) => statement.type === "ImportDeclaration");
  program.body.splice(lastImport + 1, 0, ...added);
  // The program is now reprinted, and recast would print a reused `"use strict";` plus another `;`.
  for (const directive of program.directives) Object.assign(directive, { original: null });
}

/**
 * recast reprints a whole `return` statement when anything inside it changes, and ends it with
 * `;`. In a semicolon-free file, drop that `;` again where no automatic-semicolon hazard follows.
 */
function dropReprintedSemicolons(code: string, language: Language): string {
  const cuts: number[] = [];
  walk(parseWithBabel(code, language).program, (node) => {
    if (node.type !== "ReturnStatement" || node.end == null || code[node.end - 1] !== ";") return;
    if (!code.slice(node.start ?? 0, node.end).includes(`<${WRAPPER_COMPONENT}>`)) return;
    const next = code.slice(node.end).trimStart()[0];
    if (next === undefined || next === "}" || /[A-Za-z_$]/.test(next)) cuts.push(node.end - 1);
  });
  return cuts.sort((a, b) => b - a).reduce((text, at) => text.slice(0, at) + text.slice(at + 1), code);
}

/** The layout being injected, as finishPrinted needs it. */
interface PrintContext {
  source: string;
  filename: string;
  language: Language;
  style: SourceStyle;
  /** Returns whose parentheses relaxReturnParentheses dropped. */
  relaxed: ReadonlySet<number>;
}

/**
 * Undoes what recast's printing changed beyond the edit (semicolons in a semicolon-free file,
 * dropped return parentheses, re-indented literals and comments) and re-parses the result; a
 * failure here is a bug in the transform, and the layout stays unchanged.
 */
function finishPrinted(printed: string, { source, filename, language, style, relaxed }: PrintContext): string {
  let restored: string | null;
  try {
    const code = restoreReturnParentheses(style.semicolons ? printed : dropReprintedSemicolons(printed, language), language, relaxed, style);
    restored = restoreVerbatimRanges(source, code, language);
    if (restored !== null) parseWithBabel(restored, language);
  } catch (error) {
    throw new InjectionError(
      "layout_unsafe_jsx",
      `Injecting the backend wrapper into ${filename} would produce code that does not parse; the file was left unchanged.`,
      { cause: error },
    );
  }
  if (restored === null) {
    throw new InjectionError(
      "layout_unsafe_jsx",
      `Injecting the backend wrapper into ${filename} would change a string or comment; the file was left unchanged.`,
    );
  }
  return restored;
}

/**
 * Injects the backend client and `<BackendWrapper>` into an app's root layout (spec 2.8): imports
 * `ConvexProvider`/`ConvexReactClient`, creates the client from `EXPO_PUBLIC_CONVEX_URL` (null when
 * unset), defines `BackendWrapper`, and wraps the theme provider (or, without one, each returned
 * tree) of the default-exported component. Formatting and comments are kept. Idempotent: on an
 * injected layout it returns `{ changed: false }` and the source as is. Pure: nothing is written.
 * A layout with its own Convex provider keeps it and gets no second client (see findExistingProvider).
 *
 * @param source the layout's text
 * @param filename its path, for the language (`.tsx`, `.jsx`, `.js`) and for error messages
 * @throws InjectionError (HTTP 422) when there is no safe place for the wrapper
 * @throws ExistingProviderError (HTTP 409) when the app's own client cannot be pointed at the URL variable
 */
export function injectBackendWrapper(source: string, filename: string): InjectionResult {
  const language = languageOf(filename);
  const ast = parseForEditing(source, language, filename);
  const style = detectStyle(source, ast.program);
  const scope = analyseModule(ast.program);
  const context = { scope, filename, source };

  const snippet = buildWrapperSnippet(language, style);
  const existing = findExistingProvider(ast.program, scope, snippet, context);
  if (existing) return { changed: existing.code !== source, code: existing.code, ...(existing.note ? { note: existing.note } : {}) };
  const missing = findMissingPieces(scope, snippet, context);
  const targets = planWrapTargets(findDefaultComponent(ast.program, context), context);
  if (targets.length === 0 && missing.importNames.length === 0 && missing.statements.length === 0) {
    return { changed: false, code: source };
  }

  const wrappers = new Set(targets.map((slot) => wrapInBackendWrapper(slot, source)));
  const relaxed = relaxReturnParentheses(ast.program, wrappers);
  insertMissingPieces(ast.program, snippet.importSource, missing, style);
  const code = finishPrinted(printEdited(ast, style), { source, filename, language, style, relaxed });
  return { changed: true, code };
}
