// The model API (/v1) from the browser, as the signed-in person: the session cookie, the
// x-svc-csrf header the model API asks of cookie-signed POSTs, and x-svc-workspace. No key, no
// private endpoint: the same pipeline as any client (budgets, rate limit, routing, tools, traces).
import { sseData } from './sse.js';

/** An error of the model API in the spec's shape, with what a sentence about it needs. */
export class ChatError extends Error {
  constructor({ status, body, headers, midStream = false }) {
    const e = body?.error ?? {};
    super(e.message ?? `The service answered ${status}.`);
    this.status = status;
    this.code = e.code ?? null;
    this.param = e.param ?? null;
    this.svc = e.svc ?? {};
    this.midStream = midStream;
    this.requestId = headers?.get('x-svc-request-id') ?? null;
    const retry = Number(headers?.get('retry-after'));
    this.retryAfter = this.svc.retry_after_seconds ?? (Number.isFinite(retry) && retry > 0 ? retry : null);
    this.shapeless = !body?.error; // e.g. the plain 503 while the service restarts
  }
}

const base = (workspaceId) => ({ 'x-svc-workspace': workspaceId });

async function failure(res) {
  const body = await res.json().catch(() => null);
  // A session that ended (sign-out elsewhere, suspension, expiry): back to the sign-in page.
  if (res.status === 401) window.dispatchEvent(new Event('svc:signed-out'));
  return new ChatError({ status: res.status, body, headers: res.headers });
}

/** GET /v1/models: exactly what the person may pick in this workspace (auto, routes, models). */
export async function listModels(workspaceId) {
  const res = await fetch('/v1/models', { headers: base(workspaceId), credentials: 'same-origin' });
  if (!res.ok) throw await failure(res);
  return (await res.json()).data;
}

/** What decided a reply, from its response headers (SPEC.md Response headers). */
export function decisionOf(headers) {
  const get = (n) => headers.get(n) ?? null;
  const confidence = get('x-svc-routing-confidence');
  return {
    model: get('x-svc-model'), rule: get('x-svc-routing-rule'), route: get('x-svc-route'), reason: get('x-svc-routing-reason'),
    confidence: confidence === null ? null : Number(confidence), fallbackFrom: get('x-svc-fallback-from'), fallbackScope: get('x-svc-fallback-scope'),
  };
}

/**
 * POST /v1/chat/completions, streamed. `answer` ({ approve | deny, always }) answers a waiting
 * tool call. Resolves once the headers are in: `{ requestId, decision, events }`, where `events`
 * yields `{ text }`, `{ pending }`, `{ usage }` and at most one `{ error }` (a ChatError from an
 * error event after the first chunk); a refusal before any chunk throws a ChatError instead.
 */
export async function streamReply({ workspaceId, conversationId, model, messages, answer, signal }) {
  const headers = { ...base(workspaceId), 'content-type': 'application/json', 'x-svc-csrf': '1', 'x-svc-conversation': conversationId };
  if (answer?.approve) headers['x-svc-approve'] = answer.approve;
  if (answer?.approve && answer.always) headers['x-svc-approve-scope'] = 'always';
  if (answer?.deny) headers['x-svc-deny'] = answer.deny;
  const body = JSON.stringify({ model, messages, stream: true, stream_options: { include_usage: true } });
  let res;
  try {
    res = await fetch('/v1/chat/completions', { method: 'POST', headers, body, signal, credentials: 'same-origin' });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ChatError({ status: 0, body: { error: { code: 'network', message: 'The service could not be reached. Check the connection and try again.' } } });
  }
  if (!res.ok) throw await failure(res);
  return { requestId: res.headers.get('x-svc-request-id'), decision: decisionOf(res.headers), events: events(res) };
}

async function* events(res) {
  for await (const data of sseData(res.body)) {
    if (data === '[DONE]') return;
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue; // not ours to show; the service already skips unparsable upstream events
    }
    if (chunk.error) {
      yield { error: new ChatError({ status: 200, body: chunk, headers: res.headers, midStream: true }) };
      return;
    }
    const text = chunk.choices?.[0]?.delta?.content;
    if (text) yield { text };
    if (chunk.usage) yield { usage: chunk.usage };
    if (chunk.svc?.pending_approval) yield { pending: chunk.svc.pending_approval };
  }
  // The body ended without [DONE] or an error event: the reply broke off on the way.
  yield { error: new ChatError({ status: 200, body: { error: { code: 'stream_interrupted', message: 'The reply broke off.' } }, headers: res.headers, midStream: true }) };
}
