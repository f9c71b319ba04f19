import { isGatewayError } from './gateway-error.js';

/** A code is safe to log when it looks like one (SQLSTATE `42803`, `ECONNREFUSED`, `ERR_…`): never a message. */
const safeCode = /^[A-Za-z0-9_.-]{1,40}$/;

/**
 * What a log line may say about a failure: the class of its root cause and that cause's code
 * (PostgreSQL's SQLSTATE, Node's `E…` codes), never its message, which can carry values
 * (a driver echoes parameters; a thrown Error may quote a body).
 *
 * @example
 * describeFailure(pgError) // { error_class: 'DatabaseError', cause: '42803' }
 */
export function describeFailure(err: unknown): { error_class: string; cause: string } {
  let root = err;
  // A GatewayError wrapping an unexpected failure: the wrapped one is what went wrong.
  for (let i = 0; i < 5 && isGatewayError(root) && root.cause !== undefined; i++) root = root.cause;
  if (root === null || typeof root !== 'object') return { error_class: typeof root, cause: 'none' };
  const name = (root as { constructor?: { name?: string } }).constructor?.name;
  const code = (root as { code?: unknown }).code;
  return {
    error_class: typeof name === 'string' && safeCode.test(name) ? name : 'Object',
    cause: (typeof code === 'string' || typeof code === 'number') && safeCode.test(String(code)) ? String(code) : 'none',
  };
}
