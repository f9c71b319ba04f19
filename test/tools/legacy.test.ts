import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shape } from '../support/harness.js';
import { LegacyMcpServer } from '../support/mcp-server-legacy.js';
import { call, model, startToolsWorld, upstreamBodies, type ToolsWorld } from './support.js';

const test = suite(`tools: older servers (1.x SDK; Streamable HTTP and HTTP+SSE) (${shape})`);
let w: ToolsWorld;
let legacy: LegacyMcpServer;

test.before(async () => {
  w = await startToolsWorld();
  legacy = await new LegacyMcpServer().start();
  await w.admin.ok('POST', '/tool-origins', { origin: legacy.origin });
  await w.ws('DELETE', `/tool-servers/${w.serverId}`);
});
test.after(async () => {
  await w?.stop();
  await legacy?.stop();
});
test.before.each(() => {
  w.mock.reset();
  legacy.calls.length = 0;
});

for (const [name, transport, path] of [['old', 'streamable-http', '/mcp'], ['oldsse', 'sse', '/sse']] as const) {
  test(`a 2025-era server over ${transport}: its tools are listed, offered and run`, async () => {
    const s = await w.ws('POST', '/tool-servers', { name, url: `${legacy.origin}${path}`, transport });
    assert.is(s.status, 201);
    try {
      const tools = await w.ws('GET', `/tool-servers/${s.body.id}/tools`);
      assert.equal(tools.body.data.map((t: any) => [t.function_name, t.needs_approval]), [[`${name}__lookup`, false], [`${name}__hang`, false], [`${name}__flood`, false]]);
      const conv = await w.conversation();
      w.mock.enqueue({ reply: { content: null, tool_calls: [call(`${name}__lookup`, { q: 'heron' })] } });
      w.mock.enqueue({ reply: { content: 'A heron wades.' } });
      const r = await w.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'heron?' }] }, { headers: { 'x-svc-conversation': conv } });
      assert.is(r.choices[0]!.message.content, 'A heron wades.');
      assert.equal(upstreamBodies(w.mock)[1].messages.at(-1).content, 'legacy found: heron');
      assert.equal(legacy.calls, [{ tool: 'lookup', args: { q: 'heron' } }]);
    } finally {
      await w.ws('DELETE', `/tool-servers/${s.body.id}`);
    }
  });
}

test.run();
