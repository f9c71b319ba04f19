import { AdminApiToken, BatchWriter, ConversationsToken, definePlugin, GatewayError, RetentionToken, StoreToken, Type, defineToken, type PluginContext, type RequestContext } from '../../kernel/index.js';
import { newMessages, replyMessage, tapResponse } from './capture.js';
import { migrations } from './migrations.js';
import { conversationRetention } from './retention-kinds.js';
import { conversationRoutes } from './routes.js';
import { Conversations, messageColumns } from './service.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'conversations.flush_failed': { rows: number };
  }
}

/** Writes buffered history now (tests read after it). */
export const ConversationsFlushToken = defineToken<() => Promise<void>>('conversations.flush');

const header = 'x-svc-conversation';
const running = new WeakMap<object, { writer: BatchWriter }>();
const stateOf = (ctx: PluginContext<unknown>) => running.get(ctx.container)!;

/**
 * Conversations (SPEC.md Conversation): `x-svc-conversation` names one of the caller's own
 * conversations (else 404 not_found); its history (the request's new messages and the reply) is
 * stored behind the response; the routing plugin keeps its routing decision here. The admin API
 * lets persons and keys create, list, read and delete their own.
 */
export default definePlugin({
  name: 'conversations',
  dependsOn: ['admin-api', 'identity'],
  config: Type.Object({
    flushIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
  }),
  migrations,
  register(ctx) {
    const store = ctx.use(StoreToken);
    const writer = new BatchWriter(store, 'conversation_messages', messageColumns, ctx.config.flushIntervalMs, 200, 100_000, (rows) =>
      ctx.log.warn('conversations.flush_failed', { rows }),
    );
    running.set(ctx.container, { writer });
    const conversations = new Conversations(store, writer);
    ctx.provide(ConversationsToken, conversations);
    ctx.provide(ConversationsFlushToken, () => conversations.flush());
    const captured = new WeakMap<object, () => string | null>();

    const join = async (rc: RequestContext, id: string): Promise<void> => {
      const p = rc.state.principal!;
      const conv = id.length <= 100 ? await conversations.get(p.workspaceId, p.personId, id) : undefined;
      if (!conv) throw new GatewayError('not_found', 'No such conversation in this workspace, or not yours. Create one first.', { param: header });
      rc.state.conversation = conv;
      captured.set(rc, tapResponse(rc.res));
    };
    // No promise for a request outside any conversation (most): the pipeline then has nothing to await.
    ctx.hook('conversation', (rc) => {
      const raw = rc.req.headers[header];
      if (raw !== undefined) return join(rc, Array.isArray(raw) ? raw[0]! : raw);
    });
    ctx.hook('settle', (rc) => {
      const conv = rc.state.conversation;
      const read = captured.get(rc);
      const out = rc.state.outcome;
      // Only finished exchanges become history: a refusal or a reply that broke off adds nothing.
      if (!conv || !read || out?.status !== 200 || out.errorCode || out.clientClosed) return;
      const text = read();
      const reply = text === null ? null : replyMessage(text, rc.state.chat!.stream);
      if (!reply) return;
      // An approval's answer resends the stopped request's messages, which history already holds.
      const added = rc.state.answersApproval ? [] : newMessages(rc.state.chat!.messages);
      conversations.append(conv.id, rc.id, [...added, reply], rc.state.model?.name ?? null);
    });

    conversationRoutes(ctx.use(AdminApiToken), conversations);
  },
  start(ctx) {
    for (const k of conversationRetention) ctx.optional(RetentionToken)?.register(k);
  },
  async stop(ctx) {
    await stateOf(ctx).writer.flush();
  },
});
