import type { IncomingMessage, ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpRouteContext } from '../../kernel/http/route-context.js';
import type { BodyReader } from '../../kernel/http/body.js';
import type { ProxyTrust } from '../../kernel/http/client-address.js';
import { newRequestContext } from '../../kernel/pipeline/context.js';

/**
 * Issue 29: the client's departure without an AbortController per request. The front calls
 * `left()` when a response closes unfinished (end to end: test/chat/streams.test.ts, a client that
 * leaves before the first chunk and mid-stream); the signal exists only once someone asks for it.
 */
const test = suite('kernel: the route context watches the client without a controller per request');

const route = (): HttpRouteContext =>
  new HttpRouteContext('req_1', {} as IncomingMessage, {} as ServerResponse, {}, {} as BodyReader, {} as ProxyTrust);

test('the slot is called once when the client leaves; a signal asked for before aborts then', () => {
  const rc = route();
  const signal = rc.signal;
  let calls = 0;
  rc.onClientGone = () => calls++;
  assert.is(rc.clientGone, false);
  assert.is(signal.aborted, false);
  rc.left();
  rc.left();
  assert.is(calls, 1);
  assert.is(rc.clientGone, true);
  assert.is(signal.aborted, true);
  assert.is(rc.signal, signal, 'one signal per request');
});

test('a signal first asked for after the client left is already aborted', () => {
  const rc = route();
  rc.left();
  assert.is(rc.signal.aborted, true);
});

test('the pipeline context reads and sets the same slot and state', () => {
  const rc = route();
  const ctx = newRequestContext(rc);
  let called = false;
  ctx.onClientGone = () => (called = true);
  assert.is(rc.onClientGone, ctx.onClientGone);
  rc.left();
  assert.is(called, true);
  assert.is(ctx.clientGone, true);
  assert.is(ctx.signal.aborted, true);
  ctx.onClientGone = undefined;
  assert.is(rc.onClientGone, undefined);
});

test.run();
