import type { ImportDeclaration, Node, Statement } from "@babel/types";
import { sameCode } from "./ast";
import { InjectionError, where, type SourceFile } from "./errors";
import type { ModuleScope } from "./scope";
import type { WrapperSnippet } from "./snippet";

/** The parts of the snippet the layout still lacks. */
export interface MissingPieces {
  /** Names to import from the snippet's module. */
  importNames: string[];
  /** An existing value import of that module to extend, when the layout has one. */
  existingImport: ImportDeclaration | null;
  /** Snippet declarations to insert, in template order. */
  statements: Statement[];
}

function collision(file: SourceFile, node: Node, name: string, expected: string): InjectionError {
  return new InjectionError(
    "layout_name_collision",
    `${where(file, node)}: \`${name}\` is already declared here and is not ${expected}; ` +
      "rename it so the backend wrapper can be injected.",
  );
}

/**
 * Compares the layout with the snippet. A name the snippet needs that the layout already binds
 * to something else (another `BackendWrapper`, a `ConvexProvider` from elsewhere, a shadowing
 * parameter) is a `layout_name_collision`; pieces already injected are not reported missing.
 */
export function findMissingPieces(scope: ModuleScope, snippet: WrapperSnippet, file: SourceFile): MissingPieces {
  const missing: MissingPieces = { importNames: [], existingImport: null, statements: [] };

  for (const name of snippet.importNames) {
    const sites = scope.declarations.get(name) ?? [];
    const imported = scope.imports.get(name);
    const ours = imported?.source === snippet.importSource && imported.imported === name && !imported.typeOnly;
    const foreign = sites.find((site) => !(ours && site.type === "ImportSpecifier"));
    if (foreign) throw collision(file, foreign, name, `a value import from "${snippet.importSource}"`);
    if (!ours) missing.importNames.push(name);
  }
  if (missing.importNames.length > 0) {
    missing.existingImport =
      [...scope.imports.values()]
        .map((binding) => binding.declaration)
        .find(
          (declaration) =>
            declaration.source.value === snippet.importSource &&
            declaration.importKind !== "type" &&
            !declaration.specifiers.some((specifier) => specifier.type === "ImportNamespaceSpecifier"),
        ) ?? null;
  }

  for (const { name, statement } of snippet.declarations) {
    const sites = scope.declarations.get(name) ?? [];
    const existing = scope.topLevel.get(name)?.statement;
    const ours = existing !== undefined && sameCode(existing, statement);
    // Our own statement declares the name through the function itself or the variable's declarator.
    const ownSite = existing?.type === "VariableDeclaration" ? existing.declarations[0] : existing;
    const foreign = sites.find((site) => !(ours && site === ownSite));
    if (foreign) throw collision(file, foreign, name, `the injected ${name}`);
    if (!ours) missing.statements.push(statement);
  }
  return missing;
}
