import type { JSXElement, JSXMemberExpression, Node } from "@babel/types";
import type { ModuleScope } from "./scope";
import { WRAPPER_COMPONENT } from "./snippet";

// `ThemeProvider`, `NavigationThemeProvider`, `AppThemeProvider`, including aliased imports of them.
const THEME_PROVIDER_NAME = /ThemeProvider$/;
// Everything expo-router renders routes through: Stack, Tabs, Slot, Drawer (from "expo-router/drawer"), …
const ROUTER_MODULE = /^expo-router(\/|$)/;

/** `<BackendWrapper>`. */
export function isWrapper(node: Node): boolean {
  return (
    node.type === "JSXElement" &&
    node.openingElement.name.type === "JSXIdentifier" &&
    node.openingElement.name.name === WRAPPER_COMPONENT
  );
}

/** A theme provider by its local name, its imported name (aliases) or as `<Nav.ThemeProvider>`. */
export function isThemeProvider(node: Node, scope: ModuleScope): boolean {
  if (node.type !== "JSXElement") return false;
  const name = node.openingElement.name;
  if (name.type === "JSXMemberExpression") return THEME_PROVIDER_NAME.test(name.property.name);
  if (name.type !== "JSXIdentifier") return false;
  return THEME_PROVIDER_NAME.test(name.name) || THEME_PROVIDER_NAME.test(scope.imports.get(name.name)?.imported ?? "");
}

function rootIdentifier(name: JSXElement["openingElement"]["name"] | JSXMemberExpression["object"]): string | null {
  if (name.type === "JSXIdentifier") return name.name;
  return name.type === "JSXMemberExpression" ? rootIdentifier(name.object) : null;
}

/**
 * Where the app's screens render: an element from expo-router (`<Stack>`, `<Slot>`, `<Tabs>`, …)
 * or `{children}` / `{props.children}` passed in by the layout. The backend provider must be
 * above every one of them.
 */
export function isRouteOutlet(node: Node, scope: ModuleScope): boolean {
  if (node.type === "JSXElement") {
    const local = rootIdentifier(node.openingElement.name);
    return local !== null && ROUTER_MODULE.test(scope.imports.get(local)?.source ?? "");
  }
  if (node.type !== "JSXExpressionContainer") return false;
  const { expression } = node;
  if (expression.type === "Identifier") return expression.name === "children";
  return (
    expression.type === "MemberExpression" &&
    expression.property.type === "Identifier" &&
    expression.property.name === "children"
  );
}
