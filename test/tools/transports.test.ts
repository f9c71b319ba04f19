import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import type { LocalHttpServer } from '../support/mcp-server-base.js';
import { LegacyMcpServer } from '../support/mcp-server-legacy.js';
import { McpTestServer } from '../support/mcp-server.js';
import { eventually } from '../routing/support.js';
import { callOnce, startToolsWorld, type ToolsWorld } from './support.js';

/**
 * What svc owes a tool server on every remote transport: a call it gives up on is cancelled, a
 * session it no longer needs is ended, a result too large is refused when it passes the limit, and
 * the protocol revision it speaks is remembered (no failing probe on every call). Against real servers: the 2.x SDK's (2026-07-28,
 * `files`) and the 1.x SDK's (2025-11-25) without sessions, with sessions, and over HTTP+SSE.
 */
const test = suite(`tools: cancels, sessions, size limits and protocol revisions on every transport (${shape})`);
let w: ToolsWorld;
let legacy: LegacyMcpServer;
const servers: Array<{ name: string; server: () => LocalHttpServer; cancelNotice: boolean }> = [
  // The 2026-07-28 revision cancels by closing the call's response stream, not with a notification.
  { name: 'files', server: () => w.mcp, cancelNotice: false },
  { name: 'old', server: () => legacy, cancelNotice: true },
  { name: 'stateful', server: () => legacy, cancelNotice: true },
  { name: 'oldsse', server: () => legacy, cancelNotice: true },
];

test.before(async () => {
  w = await startToolsWorld();
  legacy = await new LegacyMcpServer().start();
  await w.admin.ok('POST', '/tool-origins', { origin: legacy.origin });
  for (const [name, path, transport] of [['old', '/mcp', 'streamable-http'], ['stateful', '/stateful', 'streamable-http'], ['oldsse', '/sse', 'sse']] as const) {
    const r = await w.ws('POST', '/tool-servers', { name, url: `${legacy.origin}${path}`, transport });
    if (r.status !== 201) throw new Error(`register ${name}: ${r.status}`);
  }
});
test.after(async () => {
  await w?.stop();
  await legacy?.stop();
});
test.before.each(() => {
  w.mock.reset();
  for (const s of [w.mcp, legacy]) {
    s.calls.length = 0;
    s.received.length = 0;
    s.cancelled.length = 0;
  }
});

const oneCall = (fn: string, args?: Record<string, unknown>) => callOnce(w, fn, args);

for (const s of servers) {
  test(`${s.name}: a call that times out is cancelled on the server${s.cancelNotice ? ' with notifications/cancelled' : ' (its response stream closed)'}`, async () => {
    const server = s.server();
    const { told, requestId } = await oneCall(`${s.name}__hang`);
    assert.is(told, 'The tool did not answer in time.');
    assert.equal(server.calls.map((c) => c.tool), ['hang']);
    assert.ok((await eventually(async () => server.cancelled.length > 0, 3000)) >= 0, 'the running call was cancelled');
    assert.equal(server.cancelled, ['hang']);
    if (s.cancelNotice) {
      const sent = server.received.find((m) => m.method === 'tools/call' && m.params?.name === 'hang')!;
      const notices = server.received.filter((m) => m.method === 'notifications/cancelled');
      assert.equal(notices.map((m) => m.params?.requestId), [sent.id], 'the cancel names the call');
    }
    assert.equal((await w.calls(requestId)).map((r) => [r.tool, r.outcome]), [['hang', 'error']]);
  });
}

for (const s of servers) {
  test(`${s.name}: a result over maxResponseBytes is refused as too large as soon as it passes the limit, not after the time-out`, async () => {
    const { told, requestId } = await oneCall(`${s.name}__flood`);
    // Waiting for the whole call time-out instead would tell the model "did not answer in time".
    assert.is(told, "The tool's answer was too large to use.");
    assert.equal(s.server().calls.map((c) => c.tool), ['flood']);
    assert.equal((await w.calls(requestId)).map((r) => [r.tool, r.outcome]), [['flood', 'error']]);
  });
}

test('stateful Streamable HTTP: every session svc opens (listing, calls, a call given up on) is ended with DELETE', async () => {
  const listed = await w.ws('GET', `/tool-servers/${(await w.ws('GET', '/tool-servers')).body.data.find((x: any) => x.name === 'stateful').id}/tools?refresh=true`);
  assert.equal(listed.body.data.map((t: any) => t.name).sort(), ['flood', 'hang', 'lookup']);
  const opened = legacy.sessions.length;
  assert.is((await oneCall('stateful__lookup', { q: 'owl' })).told, 'legacy found: owl');
  await oneCall('stateful__hang');
  assert.ok(legacy.sessions.length >= opened + 2, 'each use opens its own session');
  assert.ok((await eventually(async () => legacy.openSessions === 0, 3000)) >= 0, `sessions left open: ${legacy.openSessions}`);
  assert.equal([...legacy.closedSessions].sort(), [...legacy.sessions].sort(), 'each was ended by svc (DELETE)');
});

const revisions = [
  { transport: 'streamable-http', path: '/mcp', era: '2026-07-28' },
  { transport: 'streamable-http', path: '/mcp', era: '2025-11-25' },
  { transport: 'streamable-http', path: '/stateful', era: '2025-11-25' },
  { transport: 'sse', path: '/sse', era: '2025-11-25' },
] as const;
for (const r of revisions) {
  test(`${r.era} over ${r.transport} (${r.path}): the revision is learnt at the first contact and remembered, not probed with server/discover on every call`, async () => {
    // A server of its own, so that only this test's sessions reach it.
    const server: LocalHttpServer = r.era === '2026-07-28' ? await new McpTestServer().start() : await new LegacyMcpServer().start();
    await w.admin.ok('POST', '/tool-origins', { origin: server.origin });
    const added = await w.ws('POST', '/tool-servers', { name: 'rev', url: `${server.origin}${r.path}`, transport: r.transport });
    try {
      assert.is((await w.ws('GET', `/tool-servers/${added.body.id}/tools?refresh=true`)).status, 200);
      for (const q of ['owl', 'wren']) assert.match((await oneCall('rev__lookup', { q })).told, new RegExp(`found: ${q}$`));
      const methods = server.received.map((m) => m.method);
      assert.is(methods.filter((m) => m === 'server/discover').length, 1, `one probe, at the listing: ${methods.join(' ')}`);
      assert.is(methods.filter((m) => m === 'tools/call').length, 2);
      // A 2025 server still gets its initialize handshake on each session (the revision needs it).
      assert.is(methods.filter((m) => m === 'initialize').length, r.era === '2026-07-28' ? 0 : 3);
    } finally {
      await w.ws('DELETE', `/tool-servers/${added.body.id}`);
      await server.stop();
    }
  });
}

test.run();
