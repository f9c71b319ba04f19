import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { LocalHttpServer, readJsonRpc } from './mcp-server-base.js';

/**
 * An older MCP server written with the 1.x SDK (protocol revisions up to 2025-11-25): stateless
 * Streamable HTTP at /mcp, stateful Streamable HTTP (sessions, `Mcp-Session-Id`) at /stateful,
 * and the legacy HTTP+SSE pair (GET /sse, POST /messages). Its tools answer, hang until
 * cancelled, and answer too much; `received` lists every message it was sent, `cancelled` the
 * calls cancelled, `sessions` the stateful sessions opened and `closedSessions` those a client
 * ended with `DELETE`.
 */
export class LegacyMcpServer extends LocalHttpServer {
  private readonly sse = new Map<string, SSEServerTransport>();
  private readonly stateful = new Map<string, StreamableHTTPServerTransport>();
  readonly sessions: string[] = [];
  readonly closedSessions: string[] = [];

  private tools(): McpServer {
    const s = new McpServer({ name: 'svc-legacy-tools', version: '1.0.0' });
    s.registerTool('lookup', { description: 'Look a word up', inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async (args) => {
      this.calls.push({ tool: 'lookup', args });
      return { content: [{ type: 'text' as const, text: `legacy found: ${args.q}` }] };
    });
    s.registerTool('hang', { description: 'Answers only when cancelled', inputSchema: {}, annotations: { readOnlyHint: true } }, async (args, extra) => {
      this.calls.push({ tool: 'hang', args });
      await new Promise<void>((done) => {
        const t = setTimeout(done, 60_000);
        t.unref();
        extra.signal.addEventListener('abort', () => {
          this.cancelled.push('hang');
          clearTimeout(t);
          done();
        });
      });
      return { content: [{ type: 'text' as const, text: 'too late' }] };
    });
    s.registerTool('flood', { description: 'Answers two megabytes', inputSchema: {}, annotations: { readOnlyHint: true } }, async (args) => {
      this.calls.push({ tool: 'flood', args });
      return { content: [{ type: 'text' as const, text: 'x'.repeat(2 * 1024 * 1024) }] };
    });
    return s;
  }

  /** The POST body's messages are recorded, then handed to the SDK as `parsedBody`. */
  private async body(req: IncomingMessage): Promise<unknown> {
    if (req.method !== 'POST') return undefined;
    const read = await readJsonRpc(req);
    this.received.push(...read.messages);
    return read.body;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    try {
      if (url.pathname === '/mcp') {
        const body = await this.body(req);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close());
        await this.tools().connect(transport);
        await transport.handleRequest(req, res, body);
      } else if (url.pathname === '/stateful') {
        await this.serveStateful(req, res);
      } else if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        this.sse.set(transport.sessionId, transport);
        res.on('close', () => this.sse.delete(transport.sessionId));
        await this.tools().connect(transport);
      } else if (url.pathname === '/messages' && req.method === 'POST') {
        const body = await this.body(req);
        const transport = this.sse.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end();
        await transport.handlePostMessage(req, res, body);
      } else {
        res.writeHead(404).end();
      }
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  }

  /** Sessions as the 1.x SDK's stateful example keeps them: one transport and server per session. */
  private async serveStateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await this.body(req);
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? this.stateful.get(id) : undefined;
    if (known) return known.handleRequest(req, res, body);
    if (typeof id === 'string') return void res.writeHead(404).end();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.sessions.push(sid);
        this.stateful.set(sid, transport);
      },
      onsessionclosed: (sid) => {
        this.closedSessions.push(sid);
        this.stateful.delete(sid);
      },
    });
    await this.tools().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Stateful sessions still open (neither ended by their client nor by the server stopping). */
  get openSessions(): number {
    return this.stateful.size;
  }

  override async stop(): Promise<void> {
    for (const t of this.stateful.values()) await t.close().catch(() => {});
    await super.stop();
  }
}
