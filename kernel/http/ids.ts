import { randomFillSync } from 'node:crypto';

const pool = Buffer.allocUnsafe(4096);
let offset = pool.length;

/**
 * Random bytes from a pooled 4 KB buffer refilled from the CSPRNG when used up: one system call
 * per few hundred ids instead of one each (ids are made on every request).
 */
export function randomId(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString(encoding, offset, offset + bytes);
  offset += bytes;
  return id;
}
