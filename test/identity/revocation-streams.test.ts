import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { expectSdk, readEvents } from '../chat/support.js';
import { assertCharged, assertCut, assertLogged, assertNoLiveHolds, client, model, newMember, prompt, revokeMidStream, startReplicas, type Member, type Replicas } from './revocation-support.js';

/**
 * Issue 18 / SPEC.md Errors 403 access_revoked: a key's stream started on replica A ends with a
 * final access_revoked event soon after an admin, through replica B, revokes the key, suspends
 * its owner (in the workspace or instance-wide) or removes the owner from the workspace. New
 * requests with the key stay 401 invalid_api_key on both replicas.
 */
const test = suite(`identity: revocation ends a running key's stream (${shape})`);
let r: Replicas;

test.before(async () => {
  r = await startReplicas();
});
test.after(async () => {
  await r.stop();
});

/** A new request with the member's key is refused as before: 401 invalid_api_key, on both replicas. */
async function refusedEverywhere(m: Member): Promise<void> {
  for (const url of new Set([r.a.url, r.b.url])) {
    await expectSdk(client(url, m.key).chat.completions.create({ model, messages: prompt }), { status: 401, code: 'invalid_api_key' });
  }
}

/** Ways an admin takes a key's access away through B, each expected to end a stream running on A. */
const revocations: Array<{ what: string; email: string; reason: string; revoke: (m: Member) => Promise<unknown> }> = [
  { what: 'key revoked', email: 'revoked-key@example.test', reason: 'key_revoked', revoke: (m) => r.b.admin.ok('DELETE', `/workspaces/${r.workspaceId}/keys/${m.keyId}`) },
  { what: 'owner suspended in the workspace', email: 'suspended-member@example.test', reason: 'membership_suspended', revoke: (m) => r.b.admin.ok('PATCH', `/workspaces/${r.workspaceId}/members/${m.id}`, { status: 'suspended' }) },
  { what: 'owner suspended instance-wide', email: 'suspended-person@example.test', reason: 'person_suspended', revoke: (m) => r.b.admin.ok('PATCH', `/persons/${m.id}`, { status: 'suspended' }) },
];

for (const x of revocations) {
  test(`${x.what} through B: the stream on A ends with access_revoked; charged for what was produced; one log line`, async () => {
    const m = await newMember(r, x.email);
    const before = r.mock.requests.length;
    const cut = await revokeMidStream(r, m.key, () => x.revoke(m));
    await assertCut(r, cut, before + 1);
    await assertCharged(r, cut.requestId, { status: 200, completionTokens: cut.chunks });
    assertLogged(r, cut.requestId, 'key', x.reason, m);
    await refusedEverywhere(m);
  });
}

test("owner removed from the workspace through B: their stream ends, another member's stream runs on to [DONE]", async () => {
  const m = await newMember(r, 'removed@example.test');
  const other = await newMember(r, 'bystander@example.test');
  // The bystander's stream is scripted first (the mock answers in order) and started first.
  r.mock.enqueue({ chunks: Array.from({ length: 25 }, () => 'ok, '), gapMs: 40 });
  const bystander = await client(r.a.url, other.key).chat.completions.create({ model, messages: prompt, stream: true }).asResponse();
  const theirs: string[] = [];
  const reading = readEvents(bystander, (data) => void theirs.push(data));
  const before = r.mock.requests.length;
  const cut = await revokeMidStream(r, m.key, () => r.b.admin.call('DELETE', `/workspaces/${r.workspaceId}/members/${m.id}`));
  await assertCut(r, cut, before + 1);
  assertLogged(r, cut.requestId, 'key', 'membership_removed', m);
  await refusedEverywhere(m);

  await reading;
  assert.is(theirs.at(-1), '[DONE]', 'the other member was not touched');
  assert.is(theirs.length, 25 + 2, 'every chunk, the finish chunk and [DONE]');
  // Once the bystander's hold is settled too, the counters equal the records exactly.
  await assertCharged(r, cut.requestId, { status: 200, completionTokens: cut.chunks });
  assert.is(r.a.logs.events('request.access_revoked').filter((e) => e.request_id === bystander.headers.get('x-svc-request-id')).length, 0);
  await assertNoLiveHolds(r);
});

test.run();
