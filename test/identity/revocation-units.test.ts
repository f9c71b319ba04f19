import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newRequestContext, type Principal, type RequestContext, type RouteContext } from '../../kernel/index.js';
import { createLogger } from '../../kernel/log/logger.js';
import { MemorySink } from '../support/harness.js';
import { revocationOf } from '../../plugins/identity/revocation.js';
import { RunningRequests } from '../../plugins/identity/running.js';
import { emptySnapshot, type Snapshot } from '../../plugins/identity/snapshot.js';
import { sha256 } from '../../plugins/identity/secrets.js';

/**
 * The decisions behind issue 18 that the HTTP tests cannot time: what counts as a revocation, and
 * the tracker's bookkeeping (a request stopped once, a request that changed hands between
 * authenticate and tracking, a reply already over).
 */
const test = suite('identity: revocation rules and running-request bookkeeping');

const session = 'svcs_unit-test-session-token';
const keyPrincipal: Principal = { personId: 'per_1', workspaceId: 'ws_1', keyId: 'key_1', workspaceRole: 'member', instanceAdmin: false, via: 'key' };
const sessionPrincipal: Principal = { ...keyPrincipal, keyId: null, via: 'session' };

/** A snapshot in which per_1 is an active member of ws_1 with key_1 and one session expiring at `expiresAt`. */
function world(expiresAt = 10_000, loadedAt = 1_000): Snapshot {
  const s = emptySnapshot();
  s.loadedAt = loadedAt;
  s.persons.set('per_1', { id: 'per_1', instanceAdmin: false, status: 'active' });
  s.memberships.set('per_1', new Map([['ws_1', { workspaceId: 'ws_1', role: 'member', status: 'active' }]]));
  const key = { id: 'key_1', workspaceId: 'ws_1', personId: 'per_1', prefix: 'svc_AbCd' };
  s.keysById.set(key.id, key);
  s.keysByHash.set('h', key);
  s.sessionsByHash.set(sha256(session), { id: 'ses_1', personId: 'per_1', expiresAt });
  return s;
}

function request(principal: Principal, headers: Record<string, string> = {}): RequestContext {
  const rc = { id: `req_${Math.random().toString(36).slice(2)}`, req: { headers }, res: { writableEnded: false }, signal: new AbortController().signal };
  const rctx = newRequestContext(rc as unknown as RouteContext);
  rctx.state.principal = principal;
  return rctx;
}

test('what revokes a grant, and what does not', () => {
  const key = { principal: keyPrincipal, sessionHash: null, sessionExpiresAt: Infinity };
  const ses = { principal: sessionPrincipal, sessionHash: sha256(session), sessionExpiresAt: 10_000 };
  assert.is(revocationOf(key, world()), null);
  assert.is(revocationOf(ses, world()), null);
  const promoted = world();
  promoted.memberships.get('per_1')!.get('ws_1')!.role = 'admin';
  assert.is(revocationOf(key, promoted), null, 'a role change is not a revocation');
  const revoked = world();
  revoked.keysById.delete('key_1');
  assert.is(revocationOf(key, revoked), 'key_revoked');
  assert.is(revocationOf(ses, revoked), null, "a session does not care about the person's keys");
  const gone = world();
  gone.sessionsByHash.clear();
  assert.is(revocationOf(ses, gone), 'session_ended');
  // Expired on its own (the reload left it out for its age): valid when the request began, nobody took it away.
  const expired = world(5_000, 6_000);
  expired.sessionsByHash.clear();
  assert.is(revocationOf({ ...ses, sessionExpiresAt: 5_000 }, expired), null, 'an expiry is not a revocation');
  const suspended = world();
  suspended.persons.get('per_1')!.status = 'suspended';
  assert.is(revocationOf(key, suspended), 'person_suspended');
  const removed = world();
  removed.memberships.get('per_1')!.delete('ws_1');
  removed.keysById.delete('key_1');
  assert.is(revocationOf(key, removed), 'membership_removed', 'the widest cause is named');
});

test('a tracked request is stopped once, logged once, and forgotten; a finished one is left alone', () => {
  const sink = new MemorySink();
  const running = new RunningRequests(createLogger('info', sink));
  const snap = world();
  const a = request(keyPrincipal);
  const b = request(sessionPrincipal, { authorization: `Bearer ${session}` });
  const done = request(keyPrincipal);
  for (const r of [a, b, done]) running.track(r, snap);
  assert.is(running.size, 3);
  (done.res as { writableEnded: boolean }).writableEnded = true;
  const revoked = world();
  revoked.keysById.delete('key_1');
  running.recheck(revoked);
  running.recheck(revoked);
  assert.ok(a.stopReason);
  assert.is(a.stopReason?.code, 'access_revoked');
  assert.not.ok(b.stopReason, 'the session request keeps running');
  assert.not.ok(done.stopReason, 'a reply already written is not stopped');
  const lines = sink.events('request.access_revoked');
  assert.equal(lines.map((l) => [l.request_id, l.principal, l.key_id, l.key_prefix, l.reason]), [[a.id, 'key', 'key_1', 'svc_AbCd', 'key_revoked']]);
  for (const r of [a, b, done]) running.forget(r);
  assert.is(running.size, 0);
});

test('a stopped request forgotten after its place went to another request leaves that one tracked', () => {
  const running = new RunningRequests(createLogger('silent', new MemorySink()));
  const revoked = world();
  revoked.keysById.delete('key_1');
  const stopped = request(keyPrincipal);
  running.track(stopped, world());
  running.recheck(revoked);
  assert.ok(stopped.stopReason);
  assert.is(running.size, 0);
  const next = request(sessionPrincipal, { authorization: `Bearer ${session}` });
  running.track(next, world());
  running.forget(stopped);
  assert.is(running.size, 1, 'forgetting the stopped request did not remove the one that took its place');
  const signedOut = world();
  signedOut.sessionsByHash.clear();
  running.recheck(signedOut);
  assert.ok(next.stopReason, 'the request in the reused place is still rechecked');
  running.forget(next);
  assert.is(running.size, 0);
});

test('a request whose access ended between authenticate and tracking is stopped at once', () => {
  const running = new RunningRequests(createLogger('silent', new MemorySink()));
  const signedOut = world();
  signedOut.sessionsByHash.clear();
  const r = request(sessionPrincipal, { cookie: `svc_session=${session}` });
  running.track(r, signedOut);
  assert.ok(r.stopReason);
  assert.is(running.size, 0);
});

test.run();
