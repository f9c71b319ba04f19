/**
 * A command-line MCP server written with the official SDK, for the stdio tool tests: the sandbox
 * runs it as `node mcp-stdio-server.js modern` (2.x `serveStdio`, both protocol eras) or
 * `… legacy [strict]` (the 1.x SDK, 2025 revisions only). Its tools answer, need approval, read their
 * environment, fetch through the egress proxy, and break the sandbox's limits.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import * as z from 'zod';

type Text = { content: Array<{ type: 'text'; text: string }> };
type Shape = Record<string, z.ZodType>;
interface Tool { name: string; description: string; shape: Shape; readOnly: boolean; run(args: Record<string, unknown>): Promise<string> }

const text = (t: string): Text => ({ content: [{ type: 'text', text: t }] });
const sha = (v: string): string => createHash('sha256').update(v).digest('hex');

/** A plain GET through the proxy the sandbox announces (HTTP_PROXY, absolute-form request). */
const viaProxy = (url: string): Promise<string> => new Promise((done) => {
  const proxy = new URL(process.env.HTTP_PROXY ?? 'http://127.0.0.1:1');
  const req = request({ host: proxy.hostname, port: Number(proxy.port), path: url, headers: { host: new URL(url).host } }, (res) => {
    let body = '';
    res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => done(`${res.statusCode} ${body}`));
  });
  req.on('error', (e: NodeJS.ErrnoException) => done(`error ${e.code ?? 'unknown'}`));
  req.end();
});

const tools: Tool[] = [
  { name: 'lookup', description: 'Look a word up', shape: { q: z.string() }, readOnly: true, run: async (a) => `stdio found: ${String(a.q)}` },
  { name: 'delete_item', description: 'Deletes an item (no annotations: needs approval)', shape: { id: z.string() }, readOnly: false, run: async (a) => `stdio deleted ${String(a.id)}` },
  {
    name: 'whoami', description: 'Describes its environment', shape: {}, readOnly: true,
    run: async () => `region=${process.env.REGION ?? '-'} token_sha256=${sha(process.env.SVC_TEST_TOKEN ?? '')} uid=${process.getuid?.()}`,
  },
  { name: 'fetch', description: 'GET a URL through the egress proxy', shape: { url: z.string() }, readOnly: true, run: async (a) => viaProxy(String(a.url)) },
  {
    name: 'hog', description: 'Holds memory', shape: { mb: z.number() }, readOnly: true,
    run: async (a) => {
      const held: Buffer[] = [];
      for (let i = 0; i < Number(a.mb); i++) held.push(Buffer.alloc(1024 * 1024, 1));
      return `held ${held.length} MB`;
    },
  },
  { name: 'hang', description: 'Never answers', shape: {}, readOnly: true, run: () => new Promise<string>(() => {}) },
  { name: 'flood', description: 'Answers half a megabyte', shape: {}, readOnly: true, run: async () => 'x'.repeat(512 * 1024) },
];

/**
 * `legacy strict`: like servers whose SDK ends the process on any request before `initialize`
 * (the version-negotiation probe is such a request): stdin, passed on only while it opens with one.
 */
function initializeFirst(): PassThrough {
  const out = new PassThrough();
  let first = true;
  let pending = '';
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    if (first) {
      pending += chunk;
      const nl = pending.indexOf('\n');
      if (nl === -1) return;
      if ((JSON.parse(pending.slice(0, nl)) as { method?: string }).method !== 'initialize') process.exit(3);
      first = false;
      chunk = pending;
    }
    out.write(chunk);
  });
  return out;
}

if (process.argv[2] === 'legacy') {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const server = new McpServer({ name: 'svc-stdio-legacy', version: '1.0.0' });
  for (const t of tools) {
    server.registerTool(t.name, { description: t.description, inputSchema: t.shape, ...(t.readOnly ? { annotations: { readOnlyHint: true } } : {}) }, async (args: Record<string, unknown>) => text(await t.run(args)));
  }
  await server.connect(new StdioServerTransport(process.argv[3] === 'strict' ? initializeFirst() : process.stdin));
} else {
  const { McpServer } = await import('@modelcontextprotocol/server');
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  serveStdio(() => {
    const server = new McpServer({ name: 'svc-stdio-modern', version: '1.0.0' });
    for (const t of tools) {
      server.registerTool(t.name, { description: t.description, inputSchema: z.object(t.shape), ...(t.readOnly ? { annotations: { readOnlyHint: true } } : {}) }, async (args: Record<string, unknown>) => text(await t.run(args)));
    }
    return server;
  });
}
