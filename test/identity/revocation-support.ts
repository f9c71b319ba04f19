import OpenAI from 'openai';
import * as assert from 'uvu/assert';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { assertSchema } from '../support/openapi.js';
import { Admin } from '../support/provision.js';
import { cacheOf, charged, eventually, provision, startInstance, total, type Instance } from '../budgets/support.js';
import { readEvents } from '../chat/support.js';
import { counterKey, holdsSet } from '../../plugins/budgets/reservation.js';
import { periodKey } from '../../plugins/budgets/periods.js';
import { TokenCounterToken } from '../../kernel/index.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export const model = 'mock:slow';
export const prompt = [{ role: 'user' as const, content: 'Tell me a long story, please.' }];
/** A slow reply: four characters a chunk, so the rough count the gateway charges is one token a chunk. */
export const slowReply = { chunks: Array.from({ length: 300 }, () => 'tok '), gapMs: 40 };

/**
 * Two service instances on one backing (scale-out: PostgreSQL and Redis, so a change made through
 * B reaches A only by the identity change message, the safety-net reload being 30 s). Embedded,
 * an in-process cache cannot carry messages between instances, so B is A itself: one node.
 */
export interface Replicas {
  backing: Backing;
  mock: MockUpstream;
  a: Instance;
  b: Instance;
  workspaceId: string;
  stop(): Promise<void>;
}

export async function startReplicas(): Promise<Replicas> {
  const backing = await createBacking();
  const mock = await new MockUpstream().start();
  const a = await startInstance(backing);
  const b = shape === 'scale-out' ? await startInstance(backing) : a;
  await provision(a.admin, mock, { slow: { input: '2.00', output: '10.00' } });
  // A cap, so that the shared counters exist and can be compared with the usage records.
  await a.admin.ok('POST', '/budget-caps', { amount_micro_usd: 100_000_000, period: 'month' });
  const workspaceId = await a.admin.workspace('Revocation');
  return {
    backing,
    mock,
    a,
    b,
    workspaceId,
    stop: async () => {
      if (b !== a) await b.stop();
      await a.stop();
      await mock.stop();
      await backing.drop();
    },
  };
}

/** A member of the workspace (not an admin) with a session and an API key of their own. */
export interface Member {
  id: string;
  email: string;
  session: string;
  key: string;
  keyId: string;
}

export async function newMember(r: Replicas, email: string): Promise<Member> {
  const password = `pw-${email}-long-enough`;
  const { id } = await r.a.admin.ok<{ id: string }>('POST', '/persons', { email, password });
  await r.a.admin.ok('POST', `/workspaces/${r.workspaceId}/members`, { email });
  const session = (await Admin.signIn(r.a.url, email, password)).token;
  const k = await new Admin(r.a.url, session).ok<{ id: string; key: string }>('POST', `/workspaces/${r.workspaceId}/keys`, { name: 'laptop' });
  return { id, email, session, key: k.key, keyId: k.id };
}

export function client(url: string, credential: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: credential, maxRetries: 0, timeout: 30_000 });
}

/** How a stream ended after its access was taken away mid-way. */
export interface Cut {
  requestId: string;
  /** Content chunks that reached the client before the end. */
  chunks: number;
  /** The `data:` payloads in order, the last one included. */
  events: string[];
  /** From the start of the revoking admin call to the final event's arrival. */
  afterRevokeMs: number;
}

/**
 * Starts a slow stream on A through the official client, and once `after` chunks have arrived
 * runs `revoke` (an admin call, typically on B) while it keeps reading until the stream ends.
 */
export async function revokeMidStream(r: Replicas, credential: string, revoke: () => Promise<unknown>, after = 3): Promise<Cut> {
  r.mock.enqueue(slowReply);
  const res = await client(r.a.url, credential).chat.completions.create({ model, messages: prompt, stream: true }).asResponse();
  assert.is(res.status, 200);
  const requestId = res.headers.get('x-svc-request-id')!;
  const events: string[] = [];
  let chunks = 0;
  let started = 0;
  let revoking: Promise<unknown> | undefined;
  await readEvents(res, (data) => {
    events.push(data);
    if (data.startsWith('{"id"')) chunks++;
    if (chunks === after && !revoking) {
      started = performance.now();
      revoking = revoke();
    }
  });
  const afterRevokeMs = performance.now() - started;
  await revoking;
  return { requestId, chunks, events, afterRevokeMs };
}

/**
 * SPEC.md Stream events: the stream ends with one error event whose code is access_revoked (no
 * `[DONE]`), within 1.5 s of the revocation (the spec's 1 s spread plus room for a loaded machine);
 * the upstream call was aborted and nothing more went upstream.
 */
export async function assertCut(r: Replicas, cut: Cut, upstreamCalls: number): Promise<void> {
  assert.ok(cut.chunks >= 3 && cut.chunks < slowReply.chunks.length, `${cut.chunks} chunks arrived`);
  assert.not.ok(cut.events.includes('[DONE]'), 'no [DONE]');
  const last = JSON.parse(cut.events.at(-1)!) as { error: { code: string; type: string; message: string } };
  assertSchema('ErrorResponse', last);
  assert.is(last.error.code, 'access_revoked');
  assert.is(last.error.type, 'permission_error');
  assert.ok(cut.afterRevokeMs <= 1500, `ended ${Math.round(cut.afterRevokeMs)} ms after the revocation started`);
  assert.is(await r.mock.requests.at(-1)!.settled, 'aborted', 'the upstream call was aborted');
  assert.is(r.mock.requests.length, upstreamCalls, 'nothing more went upstream');
}

/**
 * One `request.access_revoked` line for the request, on the replica that ran it, with the key's
 * id and visible prefix and never the key (nor the session token).
 */
export function assertLogged(r: Replicas, requestId: string, principal: 'key' | 'session', reason: string, member: Member): void {
  const lines = r.a.logs.events('request.access_revoked').filter((e) => e.request_id === requestId);
  assert.is(lines.length, 1, 'logged once');
  const line = lines[0]!;
  assert.is(line.principal, principal);
  assert.is(line.reason, reason);
  assert.is(line.key_id, principal === 'key' ? member.keyId : null);
  assert.is(line.key_prefix, principal === 'key' ? member.key.slice(0, 8) : null);
  for (const secret of [member.key, member.session]) {
    assert.not.ok(r.a.logs.text.includes(secret), 'no credential in the logs of A');
    assert.not.ok(r.b.logs.text.includes(secret), 'no credential in the logs of B');
  }
}

/**
 * The request's usage record carries the outcome and exactly the tokens produced before the stop
 * (counted with the budgets tokenizer, as for any reply that broke off); its
 * hold is over (not left open) with the same charge; the running total and the shared counter
 * equal the sum of every usage record, so no held amount is left in them.
 */
export async function assertCharged(r: Replicas, requestId: string, x: { status: number; completionTokens: number }): Promise<void> {
  const { a } = r;
  let row: any;
  let hold: any;
  let span: any;
  await eventually(a, async () => {
    [row] = await a.sql('select * from usage_records where id = ?', [requestId]);
    [hold] = await a.sql('select * from budget_holds where request_id = ?', [requestId]);
    [span] = await a.sql('select status, attributes from spans where trace_id = ? and parent_span_id is null', [requestId]);
    assert.ok(row && hold && span, 'usage record, ended hold and span written');
  });
  assert.is(row.error_code, 'access_revoked');
  const attributes = JSON.parse(String(span.attributes)) as Record<string, unknown>;
  assert.is(span.status, 'error');
  assert.is(attributes['svc.error_code'], 'access_revoked', 'the trace shows the outcome');
  assert.is(Number(row.status), x.status);
  // A reply that broke off is counted with the budgets tokenizer (issue 19), the same one as here.
  const counter = a.service.get(TokenCounterToken);
  assert.is(Number(row.completion_tokens), x.completionTokens === 0 ? 0 : counter.text(slowReply.chunks.slice(0, x.completionTokens).join('')));
  assert.is(Number(row.prompt_tokens), x.completionTokens === 0 ? 0 : counter.input({ messages: prompt }));
  // The call had gone upstream, so the hold is settled (with what was produced, maybe nothing).
  assert.is(hold.state, 'settled');
  assert.is(Number(hold.charge_micro_usd), Number(row.cost_micro_usd));
  if (x.completionTokens > 0) assert.ok(Number(row.cost_micro_usd) > 0, 'what was produced is charged');
  await assertCountersMatch(r);
}

/** Once every request has settled: the running total and the shared counter equal the sum of the usage records. */
export async function assertCountersMatch(r: Replicas): Promise<void> {
  const month = `instance:*:month:${periodKey('month', Date.now())}`;
  await eventually(r.a, async () => {
    const sum = await charged(r.a);
    assert.is(await total(r.a, month), sum, 'running total = sum of usage records');
    assert.is(Number(await cacheOf(r.a).get(counterKey(month))), sum, 'shared counter = sum of usage records (no hold left in it)');
  });
}

/** After the last request: no hold is tracked as live anywhere. */
export async function assertNoLiveHolds(r: Replicas): Promise<void> {
  assert.equal(await cacheOf(r.a).expired(holdsSet, Number.POSITIVE_INFINITY, 10_000), []);
}
