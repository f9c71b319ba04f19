import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingMessage } from 'node:http';
import { ProxyTrust } from '../../kernel/http/client-address.js';

const test = suite('client address and HTTPS behind trusted proxies');

/** The parts of a request ProxyTrust reads. */
const req = (peer: string, headers: Record<string, string | string[]> = {}, encrypted = false) =>
  ({ socket: { remoteAddress: peer, ...(encrypted ? { encrypted: true } : {}) }, headers }) as unknown as IncomingMessage;

test('no proxy trusted: the peer, whatever the headers claim', () => {
  const t = new ProxyTrust([]);
  assert.is(t.clientAddress(req('10.0.0.5', { 'x-forwarded-for': '203.0.113.9' })), '10.0.0.5');
  assert.is(t.clientAddress(req('::ffff:192.0.2.4')), '192.0.2.4', 'an IPv4 peer on a dual-stack socket');
  assert.is(t.secure(req('10.0.0.5', { 'x-forwarded-proto': 'https' })), false);
  assert.is(t.secure(req('10.0.0.5', {}, true)), true, 'a TLS socket is HTTPS');
});

test('trusted proxies: the nearest untrusted hop of X-Forwarded-For, read from the right', () => {
  const t = new ProxyTrust(['10.0.0.0/8', '2001:db8::1']);
  assert.is(t.clientAddress(req('10.1.2.3', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' })), '203.0.113.9', 'the left entry may be forged');
  assert.is(t.clientAddress(req('10.1.2.3', { 'x-forwarded-for': '203.0.113.9, 10.9.9.9' })), '203.0.113.9', 'a chain of trusted proxies is skipped');
  assert.is(t.clientAddress(req('10.1.2.3', { 'x-forwarded-for': ['203.0.113.9', '10.2.2.2'] })), '203.0.113.9', 'the header sent twice');
  assert.is(t.clientAddress(req('10.1.2.3', { 'x-forwarded-for': '10.3.3.3' })), '10.3.3.3', 'all trusted: the left-most');
  assert.is(t.clientAddress(req('10.1.2.3', { 'x-forwarded-for': 'garbage, 10.3.3.3' })), '10.3.3.3', 'a hop that is no address stops the walk');
  assert.is(t.clientAddress(req('10.1.2.3')), '10.1.2.3', 'no header: the proxy itself');
  assert.is(t.clientAddress(req('2001:db8::1', { 'x-forwarded-for': '2001:db8:aa::7' })), '2001:db8:aa::7');
  assert.is(t.clientAddress(req('192.0.2.1', { 'x-forwarded-for': '203.0.113.9' })), '192.0.2.1', 'an untrusted peer');
});

test('X-Forwarded-Proto: the value the nearest trusted proxy wrote', () => {
  const t = new ProxyTrust(['127.0.0.1']);
  assert.is(t.secure(req('127.0.0.1', { 'x-forwarded-proto': 'https' })), true);
  assert.is(t.secure(req('127.0.0.1', { 'x-forwarded-proto': 'https, http' })), false, 'a client-sent https before the proxy’s http');
  assert.is(t.secure(req('127.0.0.1', { 'x-forwarded-proto': 'HTTPS' })), true);
  assert.is(t.secure(req('127.0.0.2', { 'x-forwarded-proto': 'https' })), false);
});

test('a bad entry stops start-up with its text', () => {
  for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
    assert.throws(() => new ProxyTrust([bad]), (e: Error) => e.message.includes(bad), bad);
  }
});

test.run();
