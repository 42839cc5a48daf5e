import fs from "node:fs/promises";
import { fileTypeFromFile } from "file-type";

/** How much of a file is read to find the root element of an SVG. */
const SVG_HEAD_BYTES = 64 * 1024;

// One prolog item at the start of the text: XML declaration or processing instruction, comment,
// or DOCTYPE (with an optional internal subset). Alternatives never overlap, so matching is linear.
const PROLOG_ITEM = /^\s*(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)/i;
const SVG_ROOT = /^\s*<svg[\s/>]/;

/**
 * True when the text is XML whose root element is `<svg>`: after an optional byte-order mark,
 * XML declaration, comments and DOCTYPE, the first element must be `svg`.
 */
export function hasSvgRoot(text: string): boolean {
  let rest = text.startsWith("\uFEFF") ? text.slice(1) : text;
  for (let item = PROLOG_ITEM.exec(rest); item; item = PROLOG_ITEM.exec(rest)) rest = rest.slice(item[0].length);
  return SVG_ROOT.test(rest);
}

/** The first `SVG_HEAD_BYTES` of a file as UTF-8, or null when they are not valid UTF-8. */
async function readUtf8Head(filePath: string): Promise<string | null> {
  const handle = await fs.open(filePath);
  try {
    const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(SVG_HEAD_BYTES), position: 0 });
    // `stream: true` tolerates a character cut in half at the end of the head.
    return new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, bytesRead), { stream: true });
  } catch (error) {
    if (error instanceof TypeError) return null;
    throw error;
  } finally {
    await handle.close();
  }
}

/**
 * What the bytes of a file are, by content alone: a `file-type` extension (magic bytes, e.g.
 * `png`, `elf`), `svg` for XML text with an `<svg>` root, or undefined when neither applies.
 */
export async function detectSignature(filePath: string): Promise<string | undefined> {
  const detected = await fileTypeFromFile(filePath);
  // file-type reports SVG with an XML declaration as `xml` and one without as nothing.
  if (detected && detected.ext !== "xml") return detected.ext;
  const head = await readUtf8Head(filePath);
  return head !== null && hasSvgRoot(head) ? "svg" : detected?.ext;
}
