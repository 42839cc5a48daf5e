import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The house's import rules, read from the code: routes stay thin (no route reaches into the
 * store), lib never imports app, and the engines under packages/ meet the product only at their
 * package entry (the `main` of their package.json), importing nothing of the product themselves.
 * The room map of docs/architecture.md is held to the same graph, so it stays true.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
// `new URL("../x.mjs", import.meta.url)`: how scripts load a package's plain JavaScript.
const URL_REFERENCE = /new URL\(\s*["'`]([^"'`]+)["'`]\s*,\s*import\.meta\.url\s*\)/g;

interface Import {
  /** The importing file, relative to the repository. */
  from: string;
  /** The imported file or folder relative to the repository (as written: no extension added), or the package name. */
  to: string;
  /** A file of this repository (`@/` or relative), not a package from node_modules or node. */
  local: boolean;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.parentPath.includes("node_modules"))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

function resolve(from: string, specifier: string): Import {
  if (specifier.startsWith("@/")) return { from, to: specifier.slice(2), local: true };
  if (specifier.startsWith(".")) return { from, to: path.relative(ROOT, path.resolve(ROOT, path.dirname(from), specifier)), local: true };
  return { from, to: specifier, local: false };
}

function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((entry) => entry.fileName);
  for (const match of text.matchAll(URL_REFERENCE)) specifiers.push(match[1]);
  return specifiers.map((specifier) => resolve(file, specifier));
}

const within = (target: string, folder: string) => target === folder || target.startsWith(`${folder}/`) || target.startsWith(`${folder}.`);
const show = (found: Import[]) => found.map(({ from, to }) => `${from} -> ${to}`);

const PACKAGES = readdirSync(path.join(ROOT, "packages")).map((name) => {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, "packages", name, "package.json"), "utf8")) as { name: string; main: string };
  const folder = `packages/${name}`;
  return { folder, name: manifest.name, entry: path.posix.join(folder, manifest.main) };
});
const PRODUCT = ["app", "lib", "scripts"].flatMap(sourceFiles).flatMap(importsOf);

describe("the import graph", () => {
  it("is read: imports, dynamic imports and URL references of every product folder", () => {
    expect(PRODUCT).toContainEqual({ from: "app/api/health/route.ts", to: "lib/http", local: true });
    expect(PRODUCT).toContainEqual({ from: "scripts/sandbox-service.ts", to: "packages/sandbox-local/src/main.mjs", local: true });
    expect(PRODUCT.filter(({ from }) => from.startsWith("lib/")).length).toBeGreaterThan(500);
  });

  it("keeps routes out of the store: app/api calls a use case of the owning lib folder", () => {
    expect(show(PRODUCT.filter(({ from, to }) => from.startsWith("app/api/") && within(to, "lib/store")))).toEqual([]);
  });

  it("never imports app from lib", () => {
    expect(show(PRODUCT.filter(({ from, to }) => from.startsWith("lib/") && within(to, "app")))).toEqual([]);
  });

  it("meets every engine package at its entry only", () => {
    // By path, only the entry file; by package name, only the bare name (not `name/src/...`).
    const inside = PRODUCT.filter(({ to, local }) =>
      PACKAGES.some((engine) => (local ? within(to, engine.folder) && to !== engine.entry : to.startsWith(`${engine.name}/`))),
    );
    expect(show(inside)).toEqual([]);
  });

  it("keeps every engine package free of the product", () => {
    for (const engine of PACKAGES) {
      const imports = sourceFiles(engine.folder).flatMap(importsOf);
      expect(imports.length).toBeGreaterThan(0);
      expect(show(imports.filter(({ to, local }) => local && !within(to, engine.folder)))).toEqual([]);
    }
  });
});

/** The room of lib/ a path lies in (`lib/store/drivers/pglite` → `store`, `lib/errors` → `errors`), or null outside lib/. */
const roomOf = (target: string) => (target.startsWith("lib/") ? target.split("/")[1].replace(/\.[a-z]+$/, "") : null);

/** Which rooms each room of lib/ imports, itself left out. */
function roomGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const { from, to, local } of PRODUCT) {
    const [source, target] = [roomOf(from), local ? roomOf(to) : null];
    if (!source) continue;
    if (!graph.has(source)) graph.set(source, new Set());
    if (target && target !== source) graph.get(source)!.add(target);
  }
  return graph;
}

describe("the ports", () => {
  const rooms = readdirSync(path.join(ROOT, "lib"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const ports = rooms.filter((room) => existsSync(path.join(ROOT, "lib", room, "drivers")));

  it("each have port.ts beside drivers/ and one contract suite, tests/contract/<port>.ts", () => {
    expect(ports.length).toBeGreaterThanOrEqual(5);
    const missing = ports.flatMap((port) => [`lib/${port}/port.ts`, `tests/contract/${port}.ts`].filter((file) => !existsSync(path.join(ROOT, file))));
    expect(missing).toEqual([]);
  });

  it("are asked for optional capabilities, never which driver they are", () => {
    const files = ["app", "lib", "scripts"].flatMap(sourceFiles);
    const asking = files.filter((file) => /\.driver\s*[!=]==|===?\s*\w+\.driver\b/.test(readFileSync(path.join(ROOT, file), "utf8")));
    expect(asking).toEqual([]);
  });
});

const MAP_PATH = "docs/architecture.md";
const MAP = readFileSync(path.join(ROOT, MAP_PATH), "utf8");
// A row of the room map: | `lib/blob` | what it owns | store |
const MAP_ROWS = [...MAP.matchAll(/^\| `((?:lib|packages)\/[a-z-]+(?:\.ts)?)` \| [^|]+ \| ([^|]+) \|$/gm)].map(([, room, imports]) => ({
  room: room.startsWith("lib/") ? roomOf(room)! : room,
  imports: imports.trim() === "nothing" ? [] : imports.split(",").map((name) => name.trim()),
}));
const GROUND = [...(MAP.match(/\*\*ground\*\* rooms \(([^)]*)\)/)?.[1] ?? "").matchAll(/`lib\/([a-z-]+)/g)].map(([, room]) => room);

describe("the room map in docs/architecture.md", () => {
  const graph = roomGraph();

  it("names every room of lib/ and every package, and its ground", () => {
    const named = new Set(MAP_ROWS.map(({ room }) => room));
    const rooms = readdirSync(path.join(ROOT, "lib"), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect([...rooms, ...PACKAGES.map(({ folder }) => folder)].filter((room) => !named.has(room))).toEqual([]);
    expect(GROUND.length).toBeGreaterThan(0);
  });

  it("says exactly which rooms each room imports (a ground room: all of them; any other: those besides the ground)", () => {
    const untrue: string[] = [];
    for (const { room, imports } of MAP_ROWS.filter(({ room }) => graph.has(room))) {
      const actual = [...graph.get(room)!].filter((target) => GROUND.includes(room) || !GROUND.includes(target)).sort();
      if (actual.join(", ") !== [...imports].sort().join(", ")) untrue.push(`lib/${room} imports ${actual.join(", ") || "nothing"}; ${MAP_PATH} says ${imports.join(", ") || "nothing"}`);
    }
    expect(untrue).toEqual([]);
    expect(GROUND.flatMap((room) => [...(graph.get(room) ?? [])].filter((target) => !GROUND.includes(target)).map((target) => `${room} -> ${target}`))).toEqual([]);
  });

  it("is right that no import cycle joins two rooms", () => {
    const cycles: string[] = [];
    const visit = (room: string, trail: string[]) => {
      if (trail.includes(room)) return void cycles.push([...trail.slice(trail.indexOf(room)), room].join(" -> "));
      for (const next of graph.get(room) ?? []) visit(next, [...trail, room]);
    };
    for (const room of graph.keys()) visit(room, []);
    expect(cycles).toEqual([]);
  });

  it("stays short: at most 1,600 words, no line over 400 characters", () => {
    expect(MAP.split(/\s+/).filter(Boolean).length).toBeLessThanOrEqual(1_600);
    expect(MAP.split("\n").filter((line) => line.length > 400)).toEqual([]);
  });
});
