import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { LocalHttpServer, readJsonRpc, sendWeb, webRequest } from './mcp-server-base.js';

/** What the `recall` tool answers: a canary that must never reach logs, spans or errors. */
export const resultCanary = 'tool-result-canary-8f3a51';

/**
 * A real MCP server (official SDK, Streamable HTTP, 2026-07-28 with the stateless 2025 fallback)
 * with tools that answer, fail, hang, need approval, echo their arguments and answer too much.
 * `calls` lists what it was asked, `received` every message, `cancelled` the calls cancelled.
 */
export class McpTestServer extends LocalHttpServer {
  private readonly handler: McpHttpHandler = createMcpHandler(() => this.tools());
  /** Authorization headers the server received. */
  readonly authorizations = new Set<string>();

  get url(): string {
    return `${this.origin}/mcp`;
  }

  override async stop(): Promise<void> {
    await this.handler.close().catch(() => {});
    await super.stop();
  }

  private tools(): McpServer {
    const s = new McpServer({ name: 'svc-test-tools', version: '1.0.0' });
    const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
    const seen = (tool: string, args: Record<string, unknown>) => this.calls.push({ tool, args });
    s.registerTool('lookup', { description: 'Look a word up', inputSchema: z.object({ q: z.string() }), annotations: { readOnlyHint: true } }, async (args) => {
      seen('lookup', args);
      return text(`found: ${args.q}`);
    });
    s.registerTool('fail', { description: 'Always fails', inputSchema: z.object({ q: z.string() }), annotations: { readOnlyHint: true } }, async (args) => {
      seen('fail', args);
      return { ...text(`server-side failure for ${args.q}`), isError: true };
    });
    s.registerTool('hang', { description: 'Never answers', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async (args, ctx) => {
      seen('hang', args);
      await new Promise<void>((done) => {
        const t = setTimeout(done, 60_000);
        t.unref();
        ctx.mcpReq?.signal?.addEventListener('abort', () => {
          this.cancelled.push('hang');
          done();
        });
      });
      return text('too late');
    });
    s.registerTool('delete_item', { description: 'Deletes an item (no annotations: needs approval)', inputSchema: z.object({ id: z.string() }) }, async (args) => {
      seen('delete_item', args);
      return text(`deleted ${args.id}`);
    });
    s.registerTool('echo', { description: 'Echoes its argument', inputSchema: z.object({ say: z.string() }), annotations: { readOnlyHint: true } }, async (args) => {
      seen('echo', args);
      return text(`echo: ${args.say}`);
    });
    s.registerTool('recall', { description: 'Answers a stored secret', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async (args) => {
      seen('recall', args);
      return text(resultCanary);
    });
    s.registerTool('flood', { description: 'Answers two megabytes', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async (args) => {
      seen('flood', args);
      return text('x'.repeat(2 * 1024 * 1024));
    });
    return s;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (req.headers.authorization) this.authorizations.add(req.headers.authorization);
      let text: string | undefined;
      if (req.method === 'POST') {
        const read = await readJsonRpc(req);
        this.received.push(...read.messages);
        text = read.text;
      }
      await sendWeb(res, await this.handler.fetch(webRequest(req, this.origin, res, text)));
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  }
}
