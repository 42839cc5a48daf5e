import type { Node } from "@babel/types";
import { nodeAt, walk, type Slot } from "./ast";
import { findLocalComponent, renderedJsx, type ComponentFunction, type LayoutContext } from "./component";
import { InjectionError } from "./errors";
import { isRouteOutlet, isThemeProvider, isWrapper } from "./roles";
import type { ModuleScope } from "./scope";

// How far the search follows same-file components (`RootLayout` → `RootLayoutNav` → …) to the theme provider.
const MAX_COMPONENT_DEPTH = 3;

/** What one returned JSX tree holds. */
interface TreeScan {
  slot: Slot;
  /** Outermost theme providers not inside a `<BackendWrapper>`. */
  unwrappedThemeProviders: Slot[];
  hasThemeProvider: boolean;
  hasWrapper: boolean;
  /** A route outlet sits outside every theme provider and wrapper: wrapping the theme provider would not reach the screens. */
  hasExposedOutlet: boolean;
}

function scanTree(slot: Slot, scope: ModuleScope): TreeScan {
  const scan: TreeScan = { slot, unwrappedThemeProviders: [], hasThemeProvider: false, hasWrapper: false, hasExposedOutlet: false };
  walk(nodeAt(slot), (node, childSlot, ancestors) => {
    const covered = ancestors.some((ancestor) => isWrapper(ancestor) || isThemeProvider(ancestor, scope));
    if (isWrapper(node)) scan.hasWrapper = true;
    if (isRouteOutlet(node, scope) && !covered) scan.hasExposedOutlet = true;
    if (!isThemeProvider(node, scope)) return;
    scan.hasThemeProvider = true;
    if (!covered) scan.unwrappedThemeProviders.push(childSlot ?? slot);
  });
  return scan;
}

function scanComponent(component: ComponentFunction, context: LayoutContext): TreeScan[] {
  return renderedJsx(component, context).map((slot) => scanTree(slot, context.scope));
}

/**
 * Each returned tree: wrap its unwrapped theme providers when they hold all of its route outlets;
 * otherwise wrap the tree itself, unless the wrapper already holds them.
 */
function targetsOf(scans: TreeScan[]): Slot[] {
  return scans.flatMap((scan) => {
    if (scan.hasThemeProvider && !scan.hasExposedOutlet) return scan.unwrappedThemeProviders;
    return scan.hasWrapper && !scan.hasExposedOutlet ? [] : [scan.slot];
  });
}

function mentionsThemeOrWrapper(root: Node, scope: ModuleScope): boolean {
  let found = false;
  walk(root, (node) => {
    if (found) return false;
    found = isWrapper(node) || isThemeProvider(node, scope);
  });
  return found;
}

/** The same-file component a returned tree consists of (`return <RootLayoutNav />`), if any. */
function rootComponent(slot: Slot, context: LayoutContext): ComponentFunction | null {
  const root = nodeAt(slot);
  if (root.type !== "JSXElement" || root.openingElement.name.type !== "JSXIdentifier") return null;
  return findLocalComponent(root.openingElement.name.name, context);
}

function renderedJsxIfAnalysable(component: ComponentFunction, context: LayoutContext): Slot[] {
  try {
    return renderedJsx(component, context);
  } catch (error) {
    if (error instanceof InjectionError) return [];
    throw error;
  }
}

/**
 * Same-file components that make up a whole returned tree of `component` (directly or through
 * further such components) and hold a theme provider or the wrapper: the classic
 * `return <RootLayoutNav />` and `<Providers>{…}</Providers>` shapes.
 */
function themedRootComponents(component: ComponentFunction, context: LayoutContext): ComponentFunction[] {
  const visited = new Set<ComponentFunction>([component]);
  const themed: ComponentFunction[] = [];
  const visit = (current: ComponentFunction, depth: number) => {
    for (const slot of renderedJsxIfAnalysable(current, context)) {
      const local = rootComponent(slot, context);
      if (!local || visited.has(local)) continue;
      visited.add(local);
      if (mentionsThemeOrWrapper(local.body, context.scope)) themed.push(local);
      else if (depth < MAX_COMPONENT_DEPTH) visit(local, depth + 1);
    }
  };
  visit(component, 1);
  return themed;
}

/**
 * Where `<BackendWrapper>` must go so every screen the layout renders gets the backend provider:
 * around the theme provider in each returned tree that renders one (in the default-exported
 * component, or in the same-file component a returned tree consists of when it has none itself),
 * otherwise around each returned tree. An empty list means the layout is already wrapped.
 */
export function planWrapTargets(component: ComponentFunction, context: LayoutContext): Slot[] {
  const scans = scanComponent(component, context);
  if (scans.some((scan) => scan.hasThemeProvider || scan.hasWrapper)) return targetsOf(scans);
  const delegates = themedRootComponents(component, context);
  if (delegates.length === 0) return targetsOf(scans);
  return delegates.flatMap((delegate) => targetsOf(scanComponent(delegate, context)));
}
