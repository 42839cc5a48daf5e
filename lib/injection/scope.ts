import type { ImportDeclaration, LVal, Node, Program, Statement, VariableDeclarator } from "@babel/types";
import { walk } from "./ast";

/** A name bound by an import: its module and the exported name (`default` or `*` for those forms). */
export interface ImportBinding {
  source: string;
  imported: string;
  /** `import type { X }` or `import { type X }`: no runtime value. */
  typeOnly: boolean;
  declaration: ImportDeclaration;
}

/** A top-level function or variable: the statement holding it, and the declarator for variables. */
export interface TopLevelBinding {
  statement: Statement;
  declarator: VariableDeclarator | null;
}

/** What the layout's names refer to, collected once per file. */
export interface ModuleScope {
  imports: Map<string, ImportBinding>;
  topLevel: Map<string, TopLevelBinding>;
  /** Every declaring node of every name anywhere in the file (imports, variables, functions, classes, parameters). */
  declarations: Map<string, Node[]>;
}

/** Names a binding pattern (`a`, `{ a, b: [c] }`, `...d`, `e = 1`) introduces. */
function patternNames(pattern: LVal | Node): string[] {
  switch (pattern.type) {
    case "Identifier":
      return [pattern.name];
    case "ObjectPattern":
      return pattern.properties.flatMap((property) =>
        property.type === "RestElement" ? patternNames(property) : patternNames(property.value),
      );
    case "ArrayPattern":
      return pattern.elements.flatMap((element) => (element ? patternNames(element) : []));
    case "AssignmentPattern":
      return patternNames(pattern.left);
    case "RestElement":
      return patternNames(pattern.argument);
    case "TSParameterProperty":
      return patternNames(pattern.parameter);
    default:
      return [];
  }
}

function namesDeclaredBy(node: Node): string[] {
  switch (node.type) {
    case "ImportSpecifier":
    case "ImportDefaultSpecifier":
    case "ImportNamespaceSpecifier":
      return [node.local.name];
    case "VariableDeclarator":
      return patternNames(node.id);
    case "FunctionDeclaration":
    case "FunctionExpression":
    case "ArrowFunctionExpression":
    case "ObjectMethod":
    case "ClassMethod":
      return [...("id" in node && node.id ? [node.id.name] : []), ...node.params.flatMap(patternNames)];
    case "ClassDeclaration":
    case "ClassExpression":
    case "TSEnumDeclaration":
      return node.id ? [node.id.name] : [];
    case "CatchClause":
      return node.param ? patternNames(node.param) : [];
    default:
      return [];
  }
}

function collectTopLevel(program: Program): Map<string, TopLevelBinding> {
  const topLevel = new Map<string, TopLevelBinding>();
  for (const statement of program.body) {
    const declaration =
      (statement.type === "ExportNamedDeclaration" || statement.type === "ExportDefaultDeclaration") &&
      statement.declaration
        ? statement.declaration
        : statement;
    if (declaration.type === "FunctionDeclaration" && declaration.id) {
      topLevel.set(declaration.id.name, { statement, declarator: null });
    } else if (declaration.type === "VariableDeclaration") {
      for (const declarator of declaration.declarations) {
        if (declarator.id.type === "Identifier") topLevel.set(declarator.id.name, { statement, declarator });
      }
    }
  }
  return topLevel;
}

/** Collects the imports, the top-level functions and variables, and every binding of the file. */
export function analyseModule(program: Program): ModuleScope {
  const imports = new Map<string, ImportBinding>();
  for (const statement of program.body) {
    if (statement.type !== "ImportDeclaration") continue;
    for (const specifier of statement.specifiers) {
      const imported =
        specifier.type === "ImportDefaultSpecifier"
          ? "default"
          : specifier.type === "ImportNamespaceSpecifier"
            ? "*"
            : specifier.imported.type === "Identifier"
              ? specifier.imported.name
              : specifier.imported.value;
      const typeOnly = statement.importKind === "type" || (specifier.type === "ImportSpecifier" && specifier.importKind === "type");
      imports.set(specifier.local.name, { source: statement.source.value, imported, typeOnly, declaration: statement });
    }
  }
  const declarations = new Map<string, Node[]>();
  walk(program, (node) => {
    for (const name of namesDeclaredBy(node)) declarations.set(name, [...(declarations.get(name) ?? []), node]);
  });
  return { imports, topLevel: collectTopLevel(program), declarations };
}
