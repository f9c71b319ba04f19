import { errorTable, type ErrorCode } from './table.js';

const marker = Symbol.for('svc.gateway-error');

/** Extra detail fields written into the error body's `svc` object (SPEC.md "Errors"). */
export type ErrorDetails = Record<string, string | number | boolean | null>;

export interface GatewayErrorOptions {
  /** The request field at fault, written as `error.param`. */
  param?: string | null;
  /** Written as `error.svc`. Never put secrets or prompt text here. */
  details?: ErrorDetails;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type a phase throws to end a request. Its code comes from the spec's table; the
 * kernel renders it as `{error:{message,type,param,code}}` with `x-svc-request-id`.
 *
 * Recognised by a `Symbol.for` marker rather than `instanceof`, so a third-party plugin that
 * bundles its own copy of the kernel still produces errors the service renders.
 *
 * @example
 * throw new GatewayError('invalid_request', 'n must be 1', { param: 'n' });
 */
export class GatewayError extends Error {
  readonly [marker] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly retryable: boolean;
  readonly param: string | null;
  readonly details: ErrorDetails | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const row = errorTable[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = row.status;
    this.type = row.type;
    this.retryable = row.retryable;
    this.param = options.param ?? null;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The wire body of SPEC.md "Errors". */
  toBody(): { error: { message: string; type: string; param: string | null; code: string; svc?: ErrorDetails } } {
    const error: { message: string; type: string; param: string | null; code: string; svc?: ErrorDetails } = {
      message: this.message,
      type: this.type,
      param: this.param,
      code: this.code,
    };
    if (this.details) error.svc = this.details;
    return { error };
  }
}

/**
 * True for any GatewayError, including one made by another copy of the kernel.
 *
 * @example
 * if (isGatewayError(err)) res.statusCode = err.status;
 */
export function isGatewayError(value: unknown): value is GatewayError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/** Wraps anything thrown into a GatewayError; unknown failures become internal_error with no detail leaked. */
export function toGatewayError(value: unknown): GatewayError {
  if (isGatewayError(value)) return value;
  return new GatewayError('internal_error', 'The service failed to handle the request; the request id identifies it.', { cause: value });
}
