// Conversations (members): the person's own conversations in a workspace, one's history with the
// routing decision it keeps, and deleting one. Routes: #/conversations[/<workspace>[/<id>]].
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Paged, Empty, ConfirmButton, when } from '../ui.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';
import { History } from './conversation-history.js';

const titleOf = (c) => c.title || `Untitled (${c.id})`;

/** The kept routing decision in words: how the first `auto` request was routed. */
export function decisionText(d) {
  if (!d) return 'None kept yet (kept at the first request with model auto).';
  const target = d.route ? `route/${d.route}` : (d.model ?? 'the default model');
  const reason = d.reason ? `, reason ${d.reason}` : '';
  const confidence = d.confidence !== null && d.confidence !== undefined ? `, confidence ${d.confidence.toFixed(2)}` : '';
  return `${d.rule} → ${target}${reason}${confidence}`;
}

function remove(workspaceId, c) {
  return api('DELETE', `/workspaces/${seg(workspaceId)}/conversations/${seg(c.id)}`);
}

const DeleteButton = ({ workspaceId, c, done }) => html`<${ConfirmButton} label=${`Delete ${titleOf(c)}`} confirmLabel="Delete conversation"
  question=${`Delete the conversation “${titleOf(c)}” and its whole history? Requests naming it are refused from then on; this cannot be undone.`}
  onConfirm=${async () => { await remove(workspaceId, c); done(); }} />`;

function ConversationList({ me, initial }) {
  const [workspaceId, setWorkspaceId] = useState(initial || firstWorkspace(me));
  const path = `/workspaces/${seg(workspaceId)}/conversations`;
  const list = useLoad(() => (workspaceId ? api('GET', `${path}?limit=1000`) : Promise.resolve(null)), [path]);
  return html`<h1 tabindex="-1">Conversations</h1>
    <p class="hint">Your own conversations: nobody else sees them, instance admins included.</p>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel=${null} />
    ${!workspaceId ? html`<${Empty}>Choose a workspace to see your conversations in it.</${Empty}>` : html`<${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No conversations in this workspace yet. A client starts one with <code>POST /admin/v1/workspaces/${workspaceId}/conversations</code> and
          names it in the <code>x-svc-conversation</code> header of chat requests; its history and routing decision show here.</${Empty}>`
      : html`<${Paged} caption="Your conversations, newest first" rows=${d.data} head=${['Title', 'Started', 'Last activity', 'Routing kept', '']}
          row=${(c) => html`<tr data-conversation=${c.id}>
            <td><a href=${`#/conversations/${seg(workspaceId)}/${seg(c.id)}`}>${titleOf(c)}</a></td>
            <td>${when(c.created_at)}</td><td>${when(c.updated_at)}</td><td>${c.routing ? decisionText(c.routing) : '—'}</td>
            <td><${DeleteButton} workspaceId=${workspaceId} c=${c} done=${list.reload} /></td>
          </tr>`} />`)}</${Loaded}>`}`;
}

function Conversation({ me, workspaceId, id }) {
  const conv = useLoad(() => api('GET', `/workspaces/${seg(workspaceId)}/conversations/${seg(id)}`), [workspaceId, id]);
  const back = `#/conversations/${seg(workspaceId)}`;
  // Traces are for workspace admins: members see the request ids without a link.
  const traces = me.person.instance_admin || me.workspaces.some((w) => w.id === workspaceId && w.role === 'admin');
  return html`<p><a href=${back}>← All conversations</a></p>
    <${Loaded} state=${conv}>${(c) => html`<h1 tabindex="-1">${titleOf(c)}</h1>
      <dl class="facts">
        <dt>Id</dt><dd><code>${c.id}</code></dd>
        <dt>Started</dt><dd>${when(c.created_at)}</dd><dt>Last activity</dt><dd>${when(c.updated_at)}</dd>
        <dt>Routing decision</dt><dd data-testid="routing-decision">${decisionText(c.routing)}</dd>
      </dl>
      <${History} messages=${c.messages} workspaceId=${workspaceId} traces=${traces} />
      <${DeleteButton} workspaceId=${workspaceId} c=${c} done=${() => { location.hash = back; }} />`}</${Loaded}>`;
}

export function Conversations({ route, me }) {
  return route[1]
    ? html`<${Conversation} me=${me} workspaceId=${route[0]} id=${route[1]} />`
    : html`<${ConversationList} key=${route[0] ?? ''} me=${me} initial=${route[0] ?? ''} />`;
}
