import { crc32, deflateSync } from 'node:zlib';

/**
 * Minimal but valid files of each attachment type, built here byte by byte so the tests need no
 * image tools: a 1×1 PNG, JPEG, GIF and WebP, and a one-page PDF.
 */

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 1×1 RGB PNG: signature, IHDR, one zlib-compressed scanline, IEND. */
export function png(): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const scanline = Buffer.from([0, 0xff, 0x00, 0x00]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(scanline)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A 1×1 grayscale baseline JPEG: flat quantization, one-symbol Huffman tables (DC 0, AC EOB),
 * and one block whose bits are "0" (DC diff 0) and "0" (EOB), padded with ones.
 */
export function jpeg(): Buffer {
  const seg = (marker: number, body: number[]): number[] => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
  const oneSymbolTable = (tableClass: number): number[] => [tableClass, 1, ...new Array<number>(15).fill(0), 0];
  return Buffer.from([
    0xff, 0xd8,
    ...seg(0xdb, [0, ...new Array<number>(64).fill(1)]),
    ...seg(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]),
    ...seg(0xc4, oneSymbolTable(0x00)),
    ...seg(0xc4, oneSymbolTable(0x10)),
    ...seg(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f,
    0xff, 0xd9,
  ]);
}

/** A 1×1 GIF89a: two-colour table, one image, LZW codes clear, 0, end. */
export function gif(): Buffer {
  return Buffer.from([
    ...Buffer.from('GIF89a', 'latin1'), 1, 0, 1, 0, 0x80, 0, 0,
    0xff, 0xff, 0xff, 0, 0, 0,
    0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0,
    2, 2, 0x44, 0x01, 0,
    0x3b,
  ]);
}

/** A 1×1 lossless WebP (RIFF, WEBP, one VP8L chunk). */
export function webp(): Buffer {
  const vp8l = Buffer.from([0x2f, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07]);
  const chunk = Buffer.concat([Buffer.from('VP8L', 'latin1'), u32le(vp8l.length), vp8l, Buffer.alloc(vp8l.length % 2)]);
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), chunk]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/** A one-page PDF with a correct cross-reference table. */
export function pdf(): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>'];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** `data:<type>;base64,<bytes>`. */
export function dataUrl(type: string, bytes: Buffer): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}
