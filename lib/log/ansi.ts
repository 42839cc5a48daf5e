/**
 * Terminal escape sequences, written from ECMA-48: CSI (`ESC [`, parameter bytes 0x30–0x3F,
 * intermediate bytes 0x20–0x2F, one final byte 0x40–0x7E), OSC strings such as hyperlinks
 * (`ESC ]` … BEL or `ESC \`), and the remaining two-byte `ESC <Fe>` escapes. The 8-bit C1 forms
 * are left alone: UTF-8 terminals do not use them.
 */
const ANSI_ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;

/** Removes colours, cursor movement and other terminal escapes from text. */
export function stripAnsi(text: string): string {
  // The check keeps the common colourless case (CI=1) free of a regex pass and a copy.
  return text.includes("\u001b") ? text.replace(ANSI_ESCAPE, "") : text;
}
