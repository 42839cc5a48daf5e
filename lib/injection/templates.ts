import fs from "node:fs";
import path from "node:path";

/** One file to create in the app, path relative to the app root with `/` separators. */
export interface TemplateFile {
  path: string;
  content: string;
}

/** templates/backend: `files/` is copied into the app root as is; `layout-wrapper.tsx` is the snippet injected into the layout. */
const BACKEND_TEMPLATE_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "templates", "backend");

let templateFiles: readonly TemplateFile[] | undefined;
let wrapperTemplate: string | undefined;

function readTree(root: string, relative = ""): TemplateFile[] {
  const entries = fs.readdirSync(path.join(root, relative), { withFileTypes: true });
  return entries.flatMap((entry) => {
    const entryPath = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return readTree(root, entryPath);
    return [{ path: entryPath, content: fs.readFileSync(path.join(root, entryPath), "utf8") }];
  });
}

/**
 * The spec 2.7 files (`convex.json` and the `convex/` folder) to create in the app, sorted by
 * path. Read once from templates/backend/files and cached; nothing is written here.
 */
export function getBackendTemplateFiles(): TemplateFile[] {
  templateFiles ??= readTree(path.join(BACKEND_TEMPLATE_DIR, "files")).sort((a, b) => a.path.localeCompare(b.path));
  return templateFiles.map((file) => ({ ...file }));
}

/** The TSX source of the wrapper snippet (templates/backend/layout-wrapper.tsx), cached. */
export function readWrapperTemplate(): string {
  wrapperTemplate ??= fs.readFileSync(path.join(BACKEND_TEMPLATE_DIR, "layout-wrapper.tsx"), "utf8");
  return wrapperTemplate;
}
