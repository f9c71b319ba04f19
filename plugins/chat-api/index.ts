import {
  definePlugin,
  renderError,
  toGatewayError,
  describeFailure,
  sendJson,
  Type,
  CatalogToken,
  IdentityToken,
  LifecycleToken,
  PipelineToken,
  ProviderRegistryToken,
  RoutesToken,
  newRequestContext,
  DispatchStatsToken,
  TokenCounterToken,
  type TokenCounter,
  checkCsrf,
  type RequestContext,
} from '../../kernel/index.js';
import { BodyParser, type Parsed } from './body-parser.js';
import { selectExplicit, checkCapabilities } from './select.js';
import { blankOutcome, dispatch } from './dispatch.js';
import { listModels, findModel } from './models.js';
import { refuseOtherApis } from './other-apis.js';
import { Cooldown } from './cooldown.js';
import { fitContext } from './context-fit.js';
import { upstreamConfig } from './retry-policy.js';
import { Stats } from './stats.js';
import { counterOr } from './usage.js';

const MB = 1024 * 1024;

/**
 * The model API (SPEC.md Endpoints): GET /v1/models and POST /v1/chat/completions. It runs every
 * model request through the pipeline and owns the authenticate, validate, select (explicit
 * models), capabilities and dispatch hooks; other plugins hook admit, hold and settle.
 */
export default definePlugin({
  name: 'chat-api',
  dependsOn: ['identity', 'catalog', 'providers'],
  config: Type.Object({
    attachmentBytes: Type.Integer({ minimum: 1, default: 10 * MB }),
    messageAttachmentBytes: Type.Integer({ minimum: 1, default: 20 * MB }),
    /** Messages and tools one request may carry (400 invalid_request above; README "Limits"). */
    maxMessages: Type.Integer({ minimum: 1, default: 20_000 }),
    maxTools: Type.Integer({ minimum: 1, default: 2048 }),
    /** Bodies at least this large are parsed and validated on a worker thread, off the event loop. */
    offloadBytes: Type.Integer({ minimum: 0, default: 256 * 1024 }),
    /** Retries, backoff and cool-down of upstream calls (README "When the upstream fails"). */
    upstream: upstreamConfig,
  }),
  register(ctx) {
    const identity = ctx.use(IdentityToken);
    const catalog = ctx.use(CatalogToken);
    const registry = ctx.use(ProviderRegistryToken);
    const pipeline = ctx.use(PipelineToken);
    const lifecycle = ctx.use(LifecycleToken);
    const limits = { perAttachmentBytes: ctx.config.attachmentBytes, perMessageBytes: ctx.config.messageAttachmentBytes, maxMessages: ctx.config.maxMessages, maxTools: ctx.config.maxTools };
    const bodies = new BodyParser(limits, ctx.config.offloadBytes, ctx.log);
    // One function for every request: the request's id comes as an argument (pipeline.ts SettleError).
    const settleFailed = (plugin: string, _err: unknown, requestId: string): void => ctx.log.error('plugin.hook_failed', { plugin, phase: 'settle', request_id: requestId });
    ctx.container.register('chat-api.bodies', { useValue: bodies });

    ctx.hook('authenticate', (rc) => {
      rc.state.principal = identity.authenticate(rc.req.headers);
      // A person's chat page signs its model requests with the session cookie: like the admin API,
      // a cookie-signed POST must carry x-svc-csrf (checked after the credential, so a bad one is 401).
      checkCsrf('POST', rc.req.headers);
    });
    // Synchronous for the bodies parsed in place: a hook that returns no promise costs the
    // pipeline no await (pipeline.ts).
    const keep = (rc: RequestContext, parsed: Parsed): void => {
      rc.state.chat = parsed.chat;
      rc.state.needs = parsed.needs;
    };
    ctx.hook('validate', (rc) => {
      const parsed = bodies.parse(rc.body as Buffer);
      if (parsed instanceof Promise) return parsed.then((p) => keep(rc, p));
      keep(rc, parsed);
    });
    ctx.hook('select', (rc) => selectExplicit(rc, catalog));
    const up = ctx.config.upstream;
    const cooldown = new Cooldown(up.cooldownFailures, up.cooldownMs);
    const stats = new Stats(cooldown);
    ctx.provide(DispatchStatsToken, stats);
    // The budgets plugin registers after this one: its tokenizer is looked up at the first request.
    let counter: TokenCounter | undefined;
    const env = { registry, lifecycle, log: ctx.log, stats, cooldown, config: up, get counter() { return (counter ??= ctx.optional(TokenCounterToken)) ?? counterOr(undefined); } };
    ctx.hook('capabilities', checkCapabilities);
    ctx.hook('capabilities', (rc) => fitContext(rc, env.counter));
    ctx.hook('dispatch', (rc) => dispatch(rc, env));

    ctx.route('GET', '/v1/models', (rc) => {
      const principal = identity.authenticate(rc.req.headers);
      sendJson(rc.res, 200, listModels(catalog, ctx.optional(RoutesToken)?.enabledRoutes(principal.workspaceId) ?? [], principal.workspaceId));
    });
    // Model ids hold `/` and `:` (SDKs may or may not percent-encode them), so the id is the rest of the path.
    ctx.route('GET', '/v1/models/*', (rc) => {
      const principal = identity.authenticate(rc.req.headers);
      sendJson(rc.res, 200, findModel(catalog, [], rc.req.url ?? '', principal.workspaceId));
    });
    refuseOtherApis(ctx);

    ctx.route('POST', '/v1/chat/completions', async (rc) => {
      const rctx = newRequestContext(rc);
      try {
        // The key is checked from the headers before the body is read: an unauthenticated request
        // is refused without buffering its body (the kernel drops the unread rest).
        // Awaited only when a hook returned a promise (pipeline.ts: an await costs every request).
        const authenticated = pipeline.run(rctx, 'receive', 'authenticate');
        if (authenticated instanceof Promise) await authenticated;
        // Parsed in the validate phase (body-parser.ts: large bodies on a worker thread).
        rctx.body = await rc.readBody();
        // With the in-process cache the hold answers at once (holds.ts), and so does this run.
        const held = pipeline.run(rctx, 'validate', 'hold');
        if (held instanceof Promise) await held;
        await pipeline.run(rctx, 'dispatch', 'dispatch');
      } catch (err) {
        const g = toGatewayError(err);
        const outcome = (rctx.state.outcome ??= blankOutcome());
        if (rc.clientGone) {
          // The client left (the upstream call was aborted for it): nobody to answer, and not a
          // failure of the service. The record says client_closed with status 499.
          outcome.clientClosed = true;
          return;
        }
        outcome.status = g.status;
        outcome.errorCode = g.code;
        // As the kernel does for routes that let errors through: this route renders its own, so it logs them too.
        if (g.status >= 500) ctx.log.warn('request.failed', { request_id: rc.id, status: g.status, code: g.code, ...describeFailure(err) });
        if (g.code === 'request_too_large') {
          // The kernel answers it and discards the unread rest of the body; hooks' headers still go out.
          for (const [k, v] of Object.entries(rctx.headers)) rc.res.setHeader(k, v);
          throw g;
        }
        renderError(rc.res, g, rctx.headers);
      } finally {
        // A failing settle hook must not stop the others, nor go unseen.
        const settling = pipeline.settle(rctx, settleFailed);
        if (settling) await settling;
      }
      // The hot route: plain requests are read by the front's own HTTP/1.1 reader (kernel/http/direct/).
    }, { direct: true });
  },
  async stop(ctx) {
    await ctx.container.resolve<BodyParser>('chat-api.bodies').stop();
  },
});
