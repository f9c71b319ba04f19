/**
 * The spec's error table (SPEC.md "Errors"): every code the service may answer with, its HTTP
 * status, the `type` written into the body, and whether a client may retry.
 *
 * @example
 * errorTable.rate_limited // { status: 429, type: 'rate_limit_error', retryable: true }
 */
export const errorTable = {
  invalid_request: { status: 400, type: 'invalid_request_error', retryable: false },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', retryable: false },
  output_too_long: { status: 400, type: 'invalid_request_error', retryable: false },
  content_filter: { status: 400, type: 'invalid_request_error', retryable: false },
  provider_rejected_request: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_api_key: { status: 401, type: 'authentication_error', retryable: false },
  budget_exceeded: { status: 402, type: 'budget_exceeded', retryable: false },
  forbidden: { status: 403, type: 'permission_error', retryable: false },
  access_revoked: { status: 403, type: 'permission_error', retryable: false },
  model_not_found: { status: 404, type: 'not_found_error', retryable: false },
  not_found: { status: 404, type: 'not_found_error', retryable: false },
  request_too_large: { status: 413, type: 'invalid_request_error', retryable: false },
  no_model: { status: 422, type: 'invalid_request_error', retryable: false },
  provider_not_configured: { status: 422, type: 'invalid_request_error', retryable: false },
  unsupported_input: { status: 422, type: 'invalid_request_error', retryable: false },
  rate_limited: { status: 429, type: 'rate_limit_error', retryable: true },
  upstream_unavailable: { status: 502, type: 'upstream_error', retryable: true },
  provider_auth_failed: { status: 502, type: 'upstream_error', retryable: false },
  provider_billing: { status: 502, type: 'upstream_error', retryable: false },
  provider_model_not_found: { status: 502, type: 'upstream_error', retryable: false },
  stream_interrupted: { status: 502, type: 'upstream_error', retryable: true },
  budget_unavailable: { status: 503, type: 'service_unavailable_error', retryable: true },
  server_shutting_down: { status: 200, type: 'service_unavailable_error', retryable: true },
  credential_key_unavailable: { status: 500, type: 'server_error', retryable: false },
  internal_error: { status: 500, type: 'server_error', retryable: true },
} as const satisfies Record<string, { status: number; type: string; retryable: boolean }>;

/** Every error code of the spec. */
export type ErrorCode = keyof typeof errorTable;
