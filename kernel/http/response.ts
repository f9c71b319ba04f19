import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders, type OutgoingHttpHeader } from 'node:http';
import { requestIdOf } from './request-id.js';

/** The two names the request id is answered under (SPEC.md Headers: every response, refusals included). */
export const idHeaders = ['x-svc-request-id', 'x-request-id'] as const;

/**
 * The HTTP front's response: the request id goes out with the head, whichever way the head is
 * written. Setting the id with `setHeader` when the request arrived (as the front did) sent every
 * later `writeHead` down node's header-merging path: each header copied into the outgoing
 * headers map, a [name, value] pair each, then serialized. Now a head written with one flat array
 * (sendJson) takes node's direct path with the ids appended to that array (bench/README.md
 * "Eighteenth look"); any other head gets them with `setHeader` just before.
 */
export class FrontResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  // No fields of its own: one more property on node's response object cost a new property store
  // per request. The id is the request's, read back through `req`.
  override writeHead(statusCode: number, reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    const list = typeof reason === 'string' ? headers : reason;
    const id = requestIdOf(this.req);
    // An array is the caller's own (sendJson makes one per reply), so the ids join it; node adds
    // them to headers set earlier the same way it adds the rest.
    if (Array.isArray(list)) list.push(idHeaders[0], id, idHeaders[1], id);
    else {
      this.setHeader(idHeaders[0], id);
      this.setHeader(idHeaders[1], id);
    }
    return typeof reason === 'string' ? super.writeHead(statusCode, reason, headers) : super.writeHead(statusCode, reason);
  }
}
