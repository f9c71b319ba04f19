import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, getOAuthProtectedResourceMetadataUrl, McpServer, requireBearerAuth, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { LocalHttpServer, sendWeb, webRequest } from './mcp-server-base.js';
import type { TestAuthServer } from './oauth-server.js';

/**
 * A real MCP server (official SDK, Streamable HTTP) protected by OAuth: every request needs an
 * access token from `as` for this server's URL (the SDK's `requireBearerAuth`, audience checked);
 * a missing or refused token gets 401 with a `WWW-Authenticate` challenge. Its protected-resource
 * metadata (RFC 9728) is named only in that challenge (`challenge`, at a path discovery would
 * not guess) or served at the well-known URL without a hint (`well-known`).
 */
export class OAuthMcpServer extends LocalHttpServer {
  private readonly handler: McpHttpHandler = createMcpHandler((ctx) => this.tools(ctx.authInfo));
  /** Authorization headers it received. */
  readonly authorizations: string[] = [];

  constructor(private readonly as: TestAuthServer, private readonly discovery: 'challenge' | 'well-known' = 'challenge') {
    super();
  }

  get url(): string {
    return `${this.origin}/mcp`;
  }

  get metadataUrl(): string {
    return this.discovery === 'challenge' ? `${this.origin}/meta/resource-doc` : getOAuthProtectedResourceMetadataUrl(new URL(this.url));
  }

  override async start(): Promise<this> {
    await super.start();
    this.as.resource = this.url;
    return this;
  }

  override async stop(): Promise<void> {
    await this.handler.close().catch(() => {});
    await super.stop();
  }

  private tools(auth: AuthInfo | undefined): McpServer {
    const s = new McpServer({ name: 'svc-oauth-tools', version: '1.0.0' });
    s.registerTool('whoami', { description: 'Who the server acts for', inputSchema: z.object({}), annotations: { readOnlyHint: true } }, async (args) => {
      this.calls.push({ tool: 'whoami', args });
      return { content: [{ type: 'text' as const, text: `signed in as ${String(auth?.extra?.user)}` }] };
    });
    return s;
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.origin).pathname;
    try {
      if (path === new URL(this.metadataUrl).pathname && req.method === 'GET') {
        const doc = { resource: this.url, authorization_servers: [this.as.issuer], scopes_supported: ['tools'], bearer_methods_supported: ['header'] };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      }
      if (path !== '/mcp') return void res.writeHead(404).end();
      if (req.headers.authorization) this.authorizations.push(req.headers.authorization);
      const request = webRequest(req, this.origin);
      const gate = requireBearerAuth({ verifier: this.as, expectedResource: new URL(this.url), ...(this.discovery === 'challenge' ? { resourceMetadataUrl: this.metadataUrl } : {}) });
      const auth = await gate(request);
      await sendWeb(res, auth instanceof Response ? auth : await this.handler.fetch(request, { authInfo: auth }));
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  }
}
