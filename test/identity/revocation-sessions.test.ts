import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { shape } from '../support/harness.js';
import { Admin } from '../support/provision.js';
import { expectSdk } from '../chat/support.js';
import {
  assertCharged,
  assertCut,
  assertLogged,
  assertNoLiveHolds,
  client,
  model,
  newMember,
  prompt,
  revokeMidStream,
  slowReply,
  startReplicas,
  type Replicas,
} from './revocation-support.js';

/**
 * Issue 18, the rest: a person's own session signed out or suspended while their request runs;
 * a request still waiting for its first chunk gets a plain 403 access_revoked (stream or not),
 * and nothing more goes upstream.
 */
const test = suite(`identity: revocation of sessions and of requests not yet started (${shape})`);
let r: Replicas;

test.before(async () => {
  r = await startReplicas();
});
test.after(async () => {
  await r.stop();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test('session signed out through B: the official client sees the stream end with APIError access_revoked', async () => {
  const m = await newMember(r, 'signs-out@example.test');
  const before = r.mock.requests.length;
  r.mock.enqueue(slowReply);
  const { data: stream, response } = await client(r.a.url, m.session).chat.completions.create({ model, messages: prompt, stream: true }).withResponse();
  const requestId = response.headers.get('x-svc-request-id')!;
  let chunks = 0;
  let started = 0;
  let signingOut: Promise<unknown> | undefined;
  let error: unknown;
  try {
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) chunks++;
      if (chunks === 3 && !signingOut) {
        started = performance.now();
        signingOut = new Admin(r.b.url, m.session).ok('DELETE', '/sessions/current');
      }
    }
  } catch (err) {
    error = err;
  }
  const took = performance.now() - started;
  await signingOut;
  assert.instance(error, OpenAI.APIError);
  assert.is((error as InstanceType<typeof OpenAI.APIError>).code, 'access_revoked');
  assert.ok(took <= 1500, `ended ${Math.round(took)} ms after the sign-out started`);
  assert.is(await r.mock.requests.at(-1)!.settled, 'aborted');
  assert.is(r.mock.requests.length, before + 1);
  await assertCharged(r, requestId, { status: 200, completionTokens: chunks });
  assertLogged(r, requestId, 'session', 'session_ended', m);
  // Signed out is signed out: a new request with the old token is the usual 401.
  await expectSdk(client(r.a.url, m.session).chat.completions.create({ model, messages: prompt }), { status: 401, code: 'invalid_api_key' });
});

test('person suspended through B while their session streams on A: access_revoked; their key is refused too', async () => {
  const m = await newMember(r, 'suspended-session@example.test');
  const before = r.mock.requests.length;
  const cut = await revokeMidStream(r, m.session, () => r.b.admin.ok('PATCH', `/persons/${m.id}`, { status: 'suspended' }));
  await assertCut(r, cut, before + 1);
  await assertCharged(r, cut.requestId, { status: 200, completionTokens: cut.chunks });
  assertLogged(r, cut.requestId, 'session', 'person_suspended', m);
  for (const credential of [m.session, m.key]) {
    await expectSdk(client(r.a.url, credential).chat.completions.create({ model, messages: prompt }), { status: 401, code: 'invalid_api_key' });
  }
});

/** Sends a request the upstream never answers, revokes through B once it is upstream, and expects a plain 403. */
async function revokeWhileWaiting(stream: boolean, revoke: (m: Awaited<ReturnType<typeof newMember>>) => Promise<unknown>, email: string, reason: string): Promise<void> {
  const m = await newMember(r, email);
  const before = r.mock.requests.length;
  r.mock.enqueue({ hang: true });
  const answer = expectSdk(client(r.a.url, m.key).chat.completions.create({ model, messages: prompt, stream }), { status: 403, code: 'access_revoked' });
  while (r.mock.requests.length === before) await sleep(10);
  const started = performance.now();
  const revoking = revoke(m);
  const e = await answer;
  const took = performance.now() - started;
  await revoking;
  assert.ok(took <= 1500, `answered ${Math.round(took)} ms after the revocation started`);
  assert.is((e.error as { type?: string }).type, 'permission_error');
  assert.is(await r.mock.requests.at(-1)!.settled, 'aborted', 'the upstream call was aborted');
  await sleep(100);
  assert.is(r.mock.requests.length, before + 1, 'no retry, no fallback: nothing more went upstream');
  const requestId = e.headers!.get('x-svc-request-id')!;
  // Nothing was produced: nothing is charged, and the hold is over.
  await assertCharged(r, requestId, { status: 403, completionTokens: 0 });
  assertLogged(r, requestId, 'key', reason, m);
}

test('a stream still waiting for its first chunk gets 403 access_revoked when its key is revoked', async () => {
  await revokeWhileWaiting(true, (m) => r.b.admin.ok('DELETE', `/workspaces/${r.workspaceId}/keys/${m.keyId}`), 'waits-stream@example.test', 'key_revoked');
});

test('a whole (non-stream) reply still waiting gets 403 access_revoked when its owner is removed', async () => {
  await revokeWhileWaiting(false, (m) => r.b.admin.call('DELETE', `/workspaces/${r.workspaceId}/members/${m.id}`), 'waits-whole@example.test', 'membership_removed');
  await assertNoLiveHolds(r);
});

test.run();
