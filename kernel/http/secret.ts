import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares an `Authorization: Bearer …` header with a shared secret in constant time (both sides
 * hashed first, so lengths do not leak either). Used by the local services' protocols.
 *
 * @example
 * if (!bearerMatches(req.headers.authorization, secret)) return deny(401);
 */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  if (!header?.startsWith('Bearer ') || secret.length === 0) return false;
  const a = createHash('sha256').update(header.slice(7)).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}
