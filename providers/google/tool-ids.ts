import { randomBytes } from 'node:crypto';

/**
 * The tool-call ids the client sees for Gemini function calls, and back.
 *
 * Gemini before 3 gives function calls no id, so one is made up (`call_svc…`); a later `tool`
 * message is matched to its call by that id, and the function name comes from the assistant
 * message in the same history. Gemini 3 signs a function call (`thoughtSignature` on the part)
 * and refuses a replayed call without its signature; a stateless gateway keeps nothing between
 * requests, so the signature rides inside the id: `<id>~<signature>`. Clients treat ids as
 * opaque strings and echo them unchanged, which is all the round trip needs.
 */

const made = 'call_svc';
const separator = '~';

/**
 * The id for one function call of a reply.
 *
 * @example
 * toolCallId(undefined, 'EpEgCo4g…') // 'call_svcQ2x9…~EpEgCo4g…'
 */
export function toolCallId(vendorId: string | undefined, signature: string | undefined): string {
  const base = vendorId && !vendorId.includes(separator) ? vendorId : `${made}${randomBytes(9).toString('base64url')}`;
  return signature ? `${base}${separator}${signature}` : base;
}

/** A client-sent id taken apart: the vendor's own id (none for made-up ones) and the signature. */
export function readToolCallId(id: string): { vendorId?: string; signature?: string } {
  const cut = id.indexOf(separator);
  const base = cut === -1 ? id : id.slice(0, cut);
  const signature = cut === -1 ? undefined : id.slice(cut + 1) || undefined;
  const out: { vendorId?: string; signature?: string } = {};
  if (base && !base.startsWith(made)) out.vendorId = base;
  if (signature) out.signature = signature;
  return out;
}
