import { AdminApiToken, AuditToken, CacheToken, CredentialVaultToken, definePlugin, GatewayError, RetentionToken, SandboxClientToken, StoreToken, Type, type Principal, type RequestContext, type ToolDefinition } from '../../kernel/index.js';
import { Approvals } from './approvals.js';
import { ToolCatalog, type WorkspaceTool } from './catalog.js';
import { ServerToolLoop } from './loop.js';
import { ToolServerFailure } from './mcp.js';
import { migrations } from './migrations.js';
import { functionName } from './names.js';
import { OAuthSignIn, signInRetention } from './oauth/index.js';
import { CallRecords } from './records.js';
import { toolRoutes } from './routes.js';
import { keyOf, Runner, type OfferedTools, type RunnerEnv } from './runner.js';
import { Turns } from './turns.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'tools.list_failed': { request_id: string; server_id: string; kind: string };
    'tools.reopen_failed': { request_id: string };
  }
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * Workspace tools over MCP (issue 13; SPEC.md Conversation, Approval, Pending tool approval):
 * in a request naming a conversation, the workspace's enabled tools are offered to the model next
 * to the client's, run by svc in a loop inside the dispatch phase (kernel/contracts/tools.ts),
 * stopped for approvals, answered with x-svc-approve / x-svc-deny, and recorded.
 */
export default definePlugin({
  name: 'tools',
  dependsOn: ['admin-api', 'identity', 'catalog', 'conversations'],
  config: Type.Object({
    /** Tool rounds in one request before the model is asked without the workspace tools. */
    maxSteps: Type.Integer({ minimum: 1, default: 8 }),
    /** One tool call (connect and call), and one tool listing. */
    callTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
    /** The most a tool server's HTTP response may hold; a larger one is an error result. */
    maxResponseBytes: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
    /** A result is cut to this many characters before the model reads it. */
    maxResultChars: Type.Integer({ minimum: 100, default: 32_000 }),
    /** How long a replica keeps a server's tool list before listing it again. */
    listTtlMs: Type.Integer({ minimum: 0, default: 300_000 }),
    /** svc's address as browsers reach it (OAuth redirect URI); empty: the sign-in request's host. */
    publicUrl: Type.String({ default: '', pattern: '^(https?://[^/?#]+(/[^?#]*)?)?$' }),
    /** How long a started OAuth sign-in waits for its callback before it is unfinished for good. */
    signInTtlMs: Type.Integer({ minimum: 1000, default: 600_000 }),
  }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const c = ctx.config;
    const limits = { maxBytes: c.maxResponseBytes, timeoutMs: c.callTimeoutMs, listTtlMs: c.listTtlMs, resultChars: c.maxResultChars, maxSteps: c.maxSteps };
    const vault = ctx.use(CredentialVaultToken);
    // Command-line servers run in the sandbox (plugin `sandbox`, optional: registered after this one, so looked up when used).
    const sandbox = () => ctx.optional(SandboxClientToken);
    // The sign-in checks the catalog's allow-list (only when it runs); the catalog asks the sign-in for tokens.
    const oauth = new OAuthSignIn(store, vault, ctx.use(CacheToken), ctx.log, limits, (url) => catalog.originAllowed(url), { ttlMs: c.signInTtlMs, publicUrl: c.publicUrl });
    const catalog: ToolCatalog = new ToolCatalog(store, vault, limits, sandbox, oauth.access);
    const records = new CallRecords(store);
    const approvals = new Approvals(store);
    const env: RunnerEnv = { catalog, records, approvals, log: ctx.log, limits };
    /** The loops of requests that answer an approval, to tell at settle whether the answer took effect. */
    const answering$ = new WeakMap<RequestContext, Turns>();

    /** The enabled tools of the workspace, named for the model; a server that cannot be listed is left out. */
    const offer = async (rc: RequestContext, p: Principal, taken: Set<string>): Promise<OfferedTools> => {
      const offered: OfferedTools = { byName: new Map(), byKey: new Map() };
      for (const server of await catalog.servers(p.workspaceId)) {
        let tools: WorkspaceTool[];
        try {
          tools = await catalog.tools(server, rc.signal);
        } catch (err) {
          if (!(err instanceof ToolServerFailure)) throw err;
          ctx.log.warn('tools.list_failed', { request_id: rc.id, server_id: server.id, kind: err.kind });
          continue;
        }
        for (const t of tools.filter((x) => x.enabled)) {
          const name = functionName(server.name, t.name, taken);
          taken.add(name);
          offered.byName.set(name, t);
          offered.byKey.set(keyOf(server.id, t.name), { name, tool: t });
        }
      }
      return offered;
    };

    const inConversation = async (rc: RequestContext, p: Principal, conv: NonNullable<RequestContext['state']['conversation']>, approveId: string | undefined, denyId: string | undefined, scope: string | undefined): Promise<void> => {
      const answering = approveId ?? denyId;
      let resume: ConstructorParameters<typeof Turns>[5] = null;
      if (answering !== undefined) {
        const approve = approveId !== undefined;
        const approval = await approvals.answer(p, conv.id, answering, approve, approve ? 'x-svc-approve' : 'x-svc-deny');
        await records.answer(approval.id, approve ? 'approved' : 'refused', rc.id);
        if (scope === 'always') {
          await approvals.grant(p, approval.serverId, approval.tool);
          // Not made through the admin API, so admin-api's recording does not see it (issue 30).
          await ctx.optional(AuditToken)?.record({
            action: 'tool_approval.always', outcome: 'success', actor_id: p.personId, actor_via: p.via, actor_key_id: p.keyId,
            client_address: rc.clientAddress || null, request_id: rc.id, route: 'POST /v1/chat/completions', resource_type: 'tool_grant',
            resource_id: `${approval.serverId}/${approval.tool}`, workspace_id: p.workspaceId, fields: [], values: {}, error_code: null,
          });
        }
        resume = { approval, approve };
        rc.state.answersApproval = approval.id;
      }
      const chat = rc.state.chat!;
      const taken = new Set((chat.tools ?? []).map((t) => t.function.name));
      const offered = await offer(rc, p, taken);
      if (offered.byName.size === 0 && !resume) return;
      if (chat.tool_choice !== 'none' && offered.byName.size > 0) {
        const defs: ToolDefinition[] = [...offered.byName].map(([name, t]) => ({
          type: 'function',
          function: { name, description: t.description.slice(0, 1024), parameters: t.inputSchema },
        }));
        chat.tools = [...(chat.tools ?? []), ...defs];
        if (rc.state.needs) rc.state.needs.tools = true;
      }
      const runner = new Runner(env, rc, p, offered);
      const turns = new Turns(rc, p, conv.id, runner, approvals, resume);
      if (resume) answering$.set(rc, turns);
      rc.state.toolLoop = new ServerToolLoop(rc, turns, c.maxSteps);
    };
    // Checks first, synchronously; the async part only for a request in a conversation (no promise otherwise).
    ctx.hook('conversation', (rc) => {
      const approveId = one(rc.req.headers['x-svc-approve']);
      const denyId = one(rc.req.headers['x-svc-deny']);
      const scope = one(rc.req.headers['x-svc-approve-scope']);
      const p = rc.state.principal!;
      if (scope !== undefined) {
        if (scope !== 'always') throw new GatewayError('invalid_request', 'x-svc-approve-scope takes only `always`.', { param: 'x-svc-approve-scope' });
        if (approveId === undefined) throw new GatewayError('invalid_request', 'x-svc-approve-scope goes with x-svc-approve.', { param: 'x-svc-approve-scope' });
        if (p.via === 'key') throw new GatewayError('forbidden', 'Only a person can approve a tool for good, not a key.', { param: 'x-svc-approve-scope' });
      }
      if (approveId !== undefined && denyId !== undefined) throw new GatewayError('invalid_request', 'Send x-svc-approve or x-svc-deny, not both.', { param: 'x-svc-deny' });
      const conv = rc.state.conversation;
      const answering = approveId ?? denyId;
      if (answering !== undefined && !conv) throw new GatewayError('invalid_request', 'An approval is answered in its conversation: send x-svc-conversation.', { param: 'x-svc-conversation' });
      if (conv) return inConversation(rc, p, conv, approveId, denyId, scope);
    });


    // An answer whose request was refused before the loop ran (429, 402, 503, a provider refusal
    // before the first model call) did not take effect: the approval waits again, so the person can
    // answer it once the refusal is over instead of meeting "already answered".
    const reopen = async (id: string, requestId: string): Promise<void> => {
      try {
        await approvals.reopen(id);
        await records.reopen(id);
      } catch {
        ctx.log.warn('tools.reopen_failed', { request_id: requestId });
      }
    };
    ctx.hook('settle', (rc) => {
      const id = rc.state.answersApproval;
      if (id !== undefined && !answering$.get(rc)?.resumed) return reopen(id, rc.id);
    });

    toolRoutes(ctx.use(AdminApiToken), catalog, records, sandbox, oauth);
    oauth.routes(ctx.use(AdminApiToken), catalog);
  },
  start(ctx) {
    // SPEC.md Retention: tool call records are kept 90 days.
    ctx.optional(RetentionToken)?.register({ kind: 'tool_calls', summary: 'Tool call records', table: 'tool_calls', keyColumn: 'id', timeColumn: 'created_at', defaultDays: 90 });
    ctx.optional(RetentionToken)?.register(signInRetention);
  },
});
