/**
 * The JSON of a snapshot's `<table>/documents.jsonl` lines, Convex's lossless export format
 * (`ValueFormat::ConvexExportJSON`, crates/value/src/export.rs): an int64 is a bare integer
 * (`123`), a finite float64 always has a fraction or exponent (`123.0`), bytes and non-finite
 * floats keep the internal `{"$bytes"}` / `{"$float"}` encoding. The emulator stores documents as
 * convex JSON (ints as `{"$integer": <base64>}`), so both directions translate that one case.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** A JSON number at `lastIndex` (sticky). */
const NUMBER = /-?\d+(\.\d+)?([eE][-+]?\d+)?/y;

function int64ToBase64(value: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64LE(value);
  return bytes.toString("base64");
}

/** An int64 as convex JSON (what system queries answer for `v.int64()` fields). */
export const int64Json = (value: bigint) => ({ $integer: int64ToBase64(value) });

const isInternalEncoding = (value: object): boolean => Object.keys(value)[0]?.startsWith("$") ?? false;

/** A float64 as export JSON: a fraction or exponent always, so it does not read back as an int64. */
function floatText(value: number): string {
  if (Object.is(value, -0)) return "-0.0";
  const text = JSON.stringify(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** A stored value (convex JSON) as one line of export JSON. */
export function toExportJson(value: unknown): string {
  if (typeof value === "number") return floatText(value);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toExportJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  if (typeof record.$integer === "string" && Object.keys(record).length === 1) return Buffer.from(record.$integer, "base64").readBigInt64LE().toString();
  if (isInternalEncoding(record)) return JSON.stringify(record);
  return `{${Object.entries(record)
    .map(([key, field]) => `${JSON.stringify(key)}:${toExportJson(field)}`)
    .join(",")}}`;
}

/**
 * One line of export JSON as convex JSON: bare integers within int64 become `{"$integer"}`, every
 * other number a float64, as upstream's `from_clean_lossless`. Throws SyntaxError when it is not JSON.
 */
export function fromExportJson(text: string): unknown {
  let converted = "";
  let copied = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') {
      inString = true;
      continue;
    }
    if (char !== "-" && (char < "0" || char > "9")) continue;
    NUMBER.lastIndex = index;
    const number = NUMBER.exec(text)?.[0] ?? char;
    if (!/[.eE]/.test(number) && number !== "-") {
      const integer = BigInt(number);
      if (integer >= INT64_MIN && integer <= INT64_MAX) {
        converted += `${text.slice(copied, index)}{"$integer":"${int64ToBase64(integer)}"}`;
        copied = index + number.length;
      }
    }
    index += number.length - 1;
  }
  return JSON.parse(converted + text.slice(copied));
}
