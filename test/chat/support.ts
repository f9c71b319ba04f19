import OpenAI from 'openai';
import * as assert from 'uvu/assert';
import { assertSchema } from '../support/openapi.js';
import { TracingFlushToken } from '../../plugins/tracing/index.js';
import { StoreToken } from '../../kernel/index.js';
import type { World } from '../support/provision.js';

/** The error the official SDK throws for an HTTP error answer. */
export type SdkError = InstanceType<typeof OpenAI.APIError>;

/** What a refusal must look like: status, code, and (when given) param and the `svc` details. */
export interface Expected {
  status: number;
  code: string;
  param?: string | null;
  svc?: Record<string, unknown>;
}

/** Awaits a call that must fail with an APIError from the SDK, and returns that error. */
export async function sdkError(call: Promise<unknown>): Promise<SdkError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  throw new Error('expected the SDK to throw an APIError');
}

/** Checks an SDK error against the spec: status, code, param, svc, request id, wire schema. */
export function checkSdkError(e: SdkError, x: Expected): void {
  const body = e.error as { code?: string; param?: string | null; svc?: Record<string, unknown> } | undefined;
  assert.is(e.status, x.status, `status of ${body?.code}: ${e.message}`);
  assert.is(e.code, x.code, e.message);
  if (x.param !== undefined) assert.is(e.param, x.param, `param of ${x.code}`);
  if (x.svc !== undefined) assert.equal(body?.svc, x.svc);
  assert.match(e.headers?.get('x-svc-request-id') ?? '', /^req_/);
  assertSchema('ErrorResponse', { error: e.error });
}

/** Sends a request through the SDK that must be refused as `x`; returns the error for more checks. */
export async function expectSdk(call: Promise<unknown>, x: Expected): Promise<SdkError> {
  const e = await sdkError(call);
  checkSdkError(e, x);
  return e;
}

/** The spec's error body read from a raw response, checked like `checkSdkError`. */
export async function checkRawError(res: Response, x: Expected): Promise<{ error: Record<string, unknown> }> {
  const text = await res.text();
  assert.is(res.status, x.status, text);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  assert.match(res.headers.get('x-svc-request-id') ?? '', /^req_/);
  const body = JSON.parse(text) as { error: Record<string, unknown> };
  assertSchema('ErrorResponse', body);
  assert.is(body.error.code, x.code, text);
  if (x.param !== undefined) assert.is(body.error.param, x.param, text);
  if (x.svc !== undefined) assert.equal(body.error.svc, x.svc);
  return body;
}

/** POSTs a chat request with fetch (raw SSE reading, aborts). */
export function post(w: World, body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

/** The `data:` payloads of a whole SSE body, in order. */
export function sseEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((e) => e.trim() !== '')
    .map((e) => e.replace(/^data: /, ''));
}

/** Reads SSE events as they arrive, calling `onEvent` with each payload and its arrival order. */
export async function readEvents(res: Response, onEvent: (data: string) => void | Promise<void>): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (event.trim() !== '') await onEvent(event.replace(/^data: /, ''));
    }
  }
}

/** The usage record of a request, after the tracing plugin flushed its batch. */
export async function usageRecord(w: World, requestId: string): Promise<Record<string, unknown> | undefined> {
  await w.svc.service.get(TracingFlushToken)();
  const rows = await w.svc.service.get(StoreToken).execute<Record<string, unknown>>('select * from usage_records where id = ?', [requestId]);
  return rows[0];
}

/** Polls `usageRecord` until it appears (settle runs behind the response). */
export async function waitUsageRecord(w: World, requestId: string, timeoutMs = 5000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const row = await usageRecord(w, requestId);
    if (row) return row;
    if (Date.now() > until) throw new Error(`no usage record for ${requestId}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

/** A short user message, the usual `messages`. */
export const hello = [{ role: 'user' as const, content: 'Hello' }];
