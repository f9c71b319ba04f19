import { defineToken } from '../container/tokens.js';
import type { ChatMessage } from './chat.js';

/**
 * The routing decision a conversation keeps (SPEC.md Model selection: "decided once per
 * conversation and kept"). Later requests answer with rule `sticky` and re-read the route, so an
 * admin's change to the route still applies; `model` is what a decision without a route chose
 * (pinned or default).
 */
export interface KeptDecision {
  rule: 'pinned' | 'signal' | 'classified' | 'default';
  route: string | null;
  model: string | null;
  reason: string | null;
  confidence: number | null;
}

/** A conversation as the pipeline sees it. */
export interface Conversation {
  id: string;
  workspaceId: string;
  personId: string;
  /** The key that created it, or null for a person's session. */
  keyId: string | null;
  title: string | null;
  decision: KeptDecision | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One stored history entry: a message of the request, or the model's reply. */
export interface StoredMessage {
  message: ChatMessage;
  /** The request that added it. */
  requestId: string;
  /** The model that answered (replies only). */
  model: string | null;
  createdAt: Date;
}

/**
 * Conversations, shared with the routing plugin (sticky decisions) and the coming tools plugin
 * (tool loop in dispatch, approvals). Rows live in the database, so every replica sees the same
 * decision and history.
 *
 * @example
 * const conv = rc.state.conversation;               // set in the `conversation` phase
 * if (conv?.decision) { ... }                       // routing: sticky
 * const kept = await conversations.keepDecision(conv.id, decision); // first writer wins
 * conversations.append(conv.id, rc.id, [{ role: 'tool', content: '…', tool_call_id: 't1' }]);
 */
export interface ConversationsService {
  /** The conversation when it belongs to this workspace and person, else undefined. */
  get(workspaceId: string, personId: string, id: string): Promise<Conversation | undefined>;
  /** Its history, oldest first. */
  history(id: string): Promise<StoredMessage[]>;
  /** Adds messages to the history behind the response (batched; see `flush`). */
  append(id: string, requestId: string, messages: ChatMessage[], model?: string | null): void;
  /** Stores the decision unless one is kept already; resolves with the one that is kept (across replicas). */
  keepDecision(id: string, decision: KeptDecision): Promise<KeptDecision>;
  /** Writes buffered history now. */
  flush(): Promise<void>;
}

export const ConversationsToken = defineToken<ConversationsService>('conversations.service');

declare module './request-state.js' {
  interface RequestState {
    /** conversation: the conversation named by `x-svc-conversation`, if any. */
    conversation?: Conversation;
    /**
     * conversation (tools): the approval this request answers (`x-svc-approve` / `x-svc-deny`). Its
     * messages are the stopped request's, resent, and already in history: only its reply is added.
     */
    answersApproval?: string;
  }
}
