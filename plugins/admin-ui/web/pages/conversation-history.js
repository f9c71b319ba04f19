// A conversation's stored history as text: each message's role, words, named attachments and tool calls.
import { useState } from 'preact/hooks';
import { seg } from '../api.js';
import { html, Empty, when } from '../ui.js';

/** Messages shown at first; earlier ones come in steps of this many. */
const step = 50;
const roles = { system: 'System', developer: 'Developer', user: 'User', assistant: 'Assistant', tool: 'Tool result' };
const partNames = { image_url: 'an image', input_audio: 'audio', file: 'a file' };

/** A message's content as text: text parts joined, other parts named (their bytes are not shown). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p.type === 'text' ? p.text : `[${partNames[p.type] ?? p.type}]`)).join('\n');
}

function Message({ m, workspaceId, traces }) {
  const msg = m.message;
  const request = traces
    ? html`<a href=${`#/requests/${seg(m.request_id)}/${seg(workspaceId)}`}><code>${m.request_id}</code></a>`
    : html`<code>${m.request_id}</code>`;
  return html`<li class=${`msg ${msg.role}`}>
    <p class="msg-head"><strong>${roles[msg.role] ?? msg.role}</strong>${m.model ? ` (${m.model})` : ''} · ${when(m.created_at)} · request ${request}</p>
    ${contentText(msg.content) && html`<p class="msg-text">${contentText(msg.content)}</p>`}
    ${(msg.tool_calls ?? []).map((t) => html`<p class="msg-text">Called <code>${t.function?.name}</code> with <code>${t.function?.arguments}</code></p>`)}
  </li>`;
}

export function History({ messages, workspaceId, traces }) {
  const [shown, setShown] = useState(step);
  if (messages.length === 0) return html`<h2>History</h2><${Empty}>No messages yet. A finished exchange of a request naming this conversation is added here.</${Empty}>`;
  const from = Math.max(0, messages.length - shown);
  return html`<h2>History</h2>
    <p class="hint">${messages.length} messages, oldest first.</p>
    ${from > 0 && html`<button type="button" onClick=${() => setShown(shown + step)}>Show ${Math.min(step, from)} earlier messages</button>`}
    <ol class="messages">${messages.slice(from).map((m, i) => html`<${Message} key=${from + i} m=${m} workspaceId=${workspaceId} traces=${traces} />`)}</ol>`;
}
