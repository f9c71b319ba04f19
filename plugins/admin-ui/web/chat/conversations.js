// The person's conversations in the workspace (the conversations admin API): the list, and
// rename/delete of the open one.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, ConfirmButton } from '../ui.js';

export const chatHref = (workspaceId, conversationId) => `#/chat/${seg(workspaceId)}${conversationId ? `/${seg(conversationId)}` : ''}`;
export const titleOf = (c) => c?.title || 'Untitled conversation';

/** The list as links; the open one is marked current. */
export function ConversationList({ list, workspaceId, openId }) {
  if (list.error) return html`<p class="error" role="alert">${list.error.message}</p>`;
  if (!list.data) return html`<p class="loading" role="status">Loading…</p>`;
  if (list.data.length === 0) return html`<p class="hint">No conversations yet. Write a message to start one.</p>`;
  return html`<ul class="conv-list">${list.data.map((c) => html`<li>
    <a href=${chatHref(workspaceId, c.id)} aria-current=${c.id === openId ? 'page' : undefined}>${titleOf(c)}</a>
  </li>`)}</ul>`;
}

/** Heading of the open conversation with Rename (inline form) and Delete (asks first). */
export function ConversationHead({ conversation, workspaceId, onChanged, onDeleted }) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState('');
  const [error, setError] = useState(null);
  const input = useRef(null);
  useEffect(() => editing && input.current?.focus(), [editing]);
  const path = conversation && `/workspaces/${seg(workspaceId)}/conversations/${seg(conversation.id)}`;
  if (!conversation) return html`<div class="chat-head"><h2 id="chat-title">New conversation</h2></div>`;
  const save = async (ev) => {
    ev.preventDefault();
    try {
      await api('PATCH', path, { title: title.trim() || null });
      setEditing(false);
      onChanged();
    } catch (err) {
      setError(err.message);
    }
  };
  if (editing) {
    return html`<form class="chat-head inline" onSubmit=${save} aria-labelledby="chat-title">
      <h2 id="chat-title" class="sr-only">Rename ${titleOf(conversation)}</h2>
      <div class="field">
        <label for="chat-rename">Conversation title</label>
        <input id="chat-rename" ref=${input} value=${title} maxLength="200" onInput=${(e) => setTitle(e.currentTarget.value)} aria-invalid=${error ? 'true' : undefined} />
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </div>
      <button type="submit">Save title</button>
      <button type="button" onClick=${() => setEditing(false)}>Cancel</button>
    </form>`;
  }
  return html`<div class="chat-head">
    <h2 id="chat-title">${titleOf(conversation)}</h2>
    <div class="actions">
      <button type="button" onClick=${() => { setTitle(conversation.title ?? ''); setError(null); setEditing(true); }}>Rename</button>
      <${ConfirmButton} label="Delete" confirmLabel="Delete conversation" question=${`Delete “${titleOf(conversation)}” and its history? This cannot be undone.`}
        onConfirm=${async () => { await api('DELETE', path); onDeleted(); }} />
    </div>
  </div>`;
}
