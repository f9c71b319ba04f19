import { GatewayError, Type, type AdminApi, type Caller, type Conversation } from '../../kernel/index.js';
import type { Conversations } from './service.js';

const tag = 'conversations';
const access = { workspace: 'member' as const, param: 'workspaceId' };

const Decision = Type.Union([
  Type.Object({
    rule: Type.String({ description: 'pinned, signal, classified or default: how the first auto request was routed' }),
    route: Type.Union([Type.String(), Type.Null()]),
    model: Type.Union([Type.String(), Type.Null()], { description: 'The model a decision without a route chose' }),
    reason: Type.Union([Type.String(), Type.Null()]),
    confidence: Type.Union([Type.Number(), Type.Null()]),
  }),
  Type.Null(),
], { description: 'The routing decision kept for the conversation (null until its first auto request)' });

const Title = Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'Shown in the chat page\'s list; at most 200 characters' });

const ConversationView = Type.Object({
  id: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  routing: Decision,
  created_at: Type.String(),
  updated_at: Type.String(),
});

const MessageView = Type.Object({
  message: Type.Object({}, { additionalProperties: true, description: 'A Chat Completions message as sent, or the reply' }),
  request_id: Type.String(),
  model: Type.Union([Type.String(), Type.Null()], { description: 'The model that answered (replies)' }),
  created_at: Type.String(),
});

const view = (c: Conversation) => ({ id: c.id, title: c.title, routing: c.decision, created_at: c.createdAt.toISOString(), updated_at: c.updatedAt.toISOString() });

/**
 * A caller's own conversations (persons and keys alike: a key acts as its creator, so it sees and
 * manages its person's conversations in its own workspace, and nobody else's).
 */
export function conversationRoutes(admin: AdminApi, conversations: Conversations): void {
  const own = async (caller: Caller | null, workspaceId: string, id: string): Promise<Conversation> => {
    const c = await conversations.get(workspaceId, caller!.personId, id);
    if (!c) throw new GatewayError('not_found', 'No such conversation, or not yours.', { param: 'id' });
    return c;
  };
  admin.route({
    method: 'POST', path: '/workspaces/:workspaceId/conversations', summary: 'Start a conversation; name it in x-svc-conversation on model requests', tag, access, status: 201,
    body: Type.Object({ title: Type.Optional(Title) }),
    response: ConversationView,
    handler: async ({ caller, params, body }) =>
      view(await conversations.create({ workspaceId: params.workspaceId!, personId: caller!.personId, keyId: caller!.keyId, title: body.title ?? null })),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/conversations', summary: "The caller's conversations in the workspace, newest first", tag, access,
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
    response: Type.Object({ data: Type.Array(ConversationView) }),
    handler: async ({ caller, params, query }) => ({ data: (await conversations.list(params.workspaceId!, caller!.personId, query.limit)).map(view) }),
  });
  admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/conversations/:id', summary: 'One conversation with its history, oldest first', tag, access,
    response: Type.Object({ ...ConversationView.properties, messages: Type.Array(MessageView) }),
    handler: async ({ caller, params }) => {
      const c = await own(caller, params.workspaceId!, params.id!);
      const messages = (await conversations.history(c.id)).map((m) => ({ message: m.message as unknown as Record<string, never>, request_id: m.requestId, model: m.model, created_at: m.createdAt.toISOString() }));
      return { ...view(c), messages };
    },
  });
  admin.route({
    method: 'PATCH', path: '/workspaces/:workspaceId/conversations/:id', summary: 'Rename a conversation (title null clears it)', tag, access,
    body: Type.Object({ title: Title }),
    response: ConversationView,
    handler: async ({ caller, params, body }) => {
      const c = await own(caller, params.workspaceId!, params.id!);
      return view(await conversations.rename(c.id, body.title === null ? null : body.title.trim() || null));
    },
  });
  admin.route({
    method: 'DELETE', path: '/workspaces/:workspaceId/conversations/:id', summary: 'Delete a conversation and its history', tag, access, status: 204, response: Type.Null(),
    handler: async ({ caller, params }) => {
      const c = await own(caller, params.workspaceId!, params.id!);
      await conversations.remove(c.id);
      return null;
    },
  });
}
