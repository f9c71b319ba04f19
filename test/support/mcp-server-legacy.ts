import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { LocalHttpServer } from './mcp-server-base.js';

/**
 * An older MCP server written with the 1.x SDK (protocol revisions up to 2025-11-25): stateless
 * Streamable HTTP at /mcp, and the legacy HTTP+SSE pair (GET /sse, POST /messages).
 */
export class LegacyMcpServer extends LocalHttpServer {
  private readonly sse = new Map<string, SSEServerTransport>();

  private tools(): McpServer {
    const s = new McpServer({ name: 'svc-legacy-tools', version: '1.0.0' });
    s.registerTool('lookup', { description: 'Look a word up', inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async (args) => {
      this.calls.push({ tool: 'lookup', args });
      return { content: [{ type: 'text' as const, text: `legacy found: ${args.q}` }] };
    });
    return s;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    try {
      if (url.pathname === '/mcp') {
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close());
        await this.tools().connect(transport);
        await transport.handleRequest(req, res);
      } else if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        this.sse.set(transport.sessionId, transport);
        res.on('close', () => this.sse.delete(transport.sessionId));
        await this.tools().connect(transport);
      } else if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = this.sse.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end();
        await transport.handlePostMessage(req, res);
      } else {
        res.writeHead(404).end();
      }
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  }
}
