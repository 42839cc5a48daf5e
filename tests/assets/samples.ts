import crypto from "node:crypto";
import zlib from "node:zlib";

const ascii = (text: string) => Buffer.from(text, "latin1");
const bytes = (...values: number[]) => Buffer.from(values);

function pngChunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([ascii(type), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

const PNG_SIGNATURE = bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const PNG_IHDR = pngChunk("IHDR", bytes(0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0));
const PNG_IEND = pngChunk("IEND", new Uint8Array(0));
/** Bytes of a PNG around its IDAT payload: signature, IHDR, IDAT length/type, CRC, IEND. */
const PNG_OVERHEAD = PNG_SIGNATURE.length + PNG_IHDR.length + 12 + PNG_IEND.length;

/**
 * A structurally valid PNG of exactly `size` bytes, produced in chunks of at most 64 KiB as they
 * are read (the IDAT payload is random), so 10 MB bodies never sit in memory whole.
 */
export function* pngChunks(size: number): Generator<Uint8Array> {
  const payload = size - PNG_OVERHEAD;
  if (payload < 0) throw new Error(`a PNG needs at least ${PNG_OVERHEAD} bytes`);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(payload);
  header.write("IDAT", 4, "latin1");
  yield Buffer.concat([PNG_SIGNATURE, PNG_IHDR, header]);
  for (let left = payload; left > 0; left -= 64 * 1024) yield crypto.randomBytes(Math.min(left, 64 * 1024));
  yield Buffer.concat([bytes(0, 0, 0, 0), PNG_IEND]); // the IDAT CRC is not checked by anyone here
}

/** The first bytes of a well-formed file of each allowed extension, as `file-type` recognises them. */
const HEADS: Record<string, Buffer> = {
  jpg: bytes(0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01),
  gif: ascii("GIF89a\x01\x00\x01\x00\x80\x00\x00"),
  webp: Buffer.concat([ascii("RIFF"), bytes(0x24, 0, 0, 0), ascii("WEBPVP8 ")]),
  ico: bytes(0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0),
  ttf: bytes(0, 1, 0, 0, 0, 0x0a, 0, 0x80),
  otf: Buffer.concat([ascii("OTTO"), bytes(0, 0x0a, 0, 0x80)]),
  woff: Buffer.concat([ascii("wOFF"), bytes(0, 1, 0, 0)]),
  woff2: Buffer.concat([ascii("wOF2"), bytes(0, 1, 0, 0)]),
  mp3: bytes(0xff, 0xfb, 0x90, 0x64),
  wav: Buffer.concat([ascii("RIFF"), bytes(0x24, 0, 0, 0), ascii("WAVEfmt ")]),
  mp4: Buffer.concat([bytes(0, 0, 0, 0x18), ascii("ftypisom"), bytes(0, 0, 2, 0), ascii("isomiso2")]),
  // EBML header with DocType "webm".
  webm: bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08, 0x42, 0x82, 0x84, 0x77, 0x65, 0x62, 0x6d, 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02),
  elf: bytes(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  exe: ascii("MZ\x90\x00\x03\x00\x00\x00"),
};

export const SVG_TEXT = '<?xml version="1.0" encoding="UTF-8"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>\n';

/**
 * A sample of `kind` (an allowed extension, or `elf`/`exe` for executables): a valid PNG or SVG,
 * or the format's head followed by zero bytes up to `size`.
 */
export function sample(kind: string, size = 256): Uint8Array {
  if (kind === "png") return Buffer.concat([...pngChunks(Math.max(size, PNG_OVERHEAD))]);
  if (kind === "svg") return Buffer.from(SVG_TEXT);
  const head = HEADS[kind === "jpeg" ? "jpg" : kind];
  if (!head) throw new Error(`no sample for ${kind}`);
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length))]);
}
