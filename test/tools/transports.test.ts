import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import type { LocalHttpServer } from '../support/mcp-server-base.js';
import { LegacyMcpServer } from '../support/mcp-server-legacy.js';
import { eventually } from '../routing/support.js';
import { call, model, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

/**
 * What svc owes a tool server on every remote transport: a call it gives up on is cancelled, a
 * session it no longer needs is ended, and a result too large is refused when it passes the limit. Against real servers: the 2.x SDK's (2026-07-28,
 * `files`) and the 1.x SDK's (2025-11-25) without sessions, with sessions, and over HTTP+SSE.
 */
const test = suite(`tools: cancelling calls and ending sessions on every transport (${shape})`);
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

const ask = { model, messages: [{ role: 'user' as const, content: 'Use the tool' }] };

/** One chat request whose model calls `fn` once; what the model was told about it, and the request id. */
async function oneCall(fn: string, args: Record<string, unknown> = {}): Promise<{ told: string; requestId: string }> {
  const conv = await w.conversation();
  w.mock.enqueue({ reply: { content: null, tool_calls: [call(fn, args)] } });
  w.mock.enqueue({ reply: { content: 'Done.' } });
  const { data, response } = await w.client.chat.completions.create(ask, { headers: { 'x-svc-conversation': conv } }).withResponse();
  assert.is(response.status, 200);
  assert.is(data.choices[0]!.message.content, 'Done.');
  return { told: upstreamBodies(w.mock)[1].messages.at(-1).content, requestId: response.headers.get('x-svc-request-id')! };
}

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

test.run();
