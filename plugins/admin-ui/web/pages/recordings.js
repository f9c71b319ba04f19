// Recorded prompts (workspace admins): in a workspace that turned recording on, the recorded
// requests newest first and, for one, its prompt messages and reply.
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useCursors, Loaded, Empty, CursorPager, when } from '../ui.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';

/** A message's content as text: strings as they are, parts named by kind. */
const text = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('\n') : c === null || c === undefined ? '' : JSON.stringify(c));

function Recording({ workspaceId, id }) {
  const trace = useLoad(() => api('GET', `/workspaces/${seg(workspaceId)}/requests/${seg(id)}/trace`), [workspaceId, id]);
  return html`<p><a href=${`#/recordings/${seg(workspaceId)}`}>← Recorded prompts</a></p>
    <h1 tabindex="-1">Recorded request <code>${id}</code></h1>
    <p><a href=${`#/requests/${seg(id)}/${seg(workspaceId)}`}>Open its trace</a></p>
    <${Loaded} state=${trace}>${(t) => (t.recording === null
      ? html`<${Empty}>Nothing was recorded for this request (recording was off, or the recording has expired).</${Empty}>`
      : html`<p class="hint">Recorded ${when(t.recording.created_at)}.</p>
        <ol class="messages" aria-label="Prompt messages">${t.recording.messages.map((m) => html`<li class=${`msg ${m.role}`}>
          <p class="msg-head">${m.role}</p><p class="msg-text">${text(m.content)}</p></li>`)}</ol>
        <h2>Reply</h2>
        <div class="msg assistant"><p class="msg-text">${t.recording.reply ?? '(no reply text: tool calls only, or it failed)'}</p></div>`)}</${Loaded}>`;
}

function List({ me, workspaceId, setWorkspaceId }) {
  const pages = useCursors();
  const setting = useLoad(() => (workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/recording`) : Promise.resolve(null)), [workspaceId]);
  const list = useLoad(() => (workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/recordings${qs({ cursor: pages.cursor })}`) : Promise.resolve(null)), [workspaceId, pages.cursor]);
  return html`<h1 tabindex="-1">Recorded prompts</h1>
    <p class="hint">Only workspaces that turned recording on keep prompts and replies, for the days they chose; only their admins see them.</p>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${(id) => { setWorkspaceId(id); pages.reset(); }} allLabel=${null} role="admin" />
    ${!workspaceId ? html`<${Empty}>Choose a workspace you administer.</${Empty}>` : html`
      ${setting.data && html`<p>${setting.data.enabled ? `Recording is on: kept ${setting.data.days} days.` : 'Recording is off in this workspace: nothing new is kept.'}
        <a href=${`#/workspaces/${seg(workspaceId)}`}>Change on the workspace's page</a>.</p>`}
      <${Loaded} state=${list}>${(p) => (p.data.length === 0 ? html`<${Empty}>No recorded requests.</${Empty}>` : html`
        <div class="table-wrap" tabindex="0" role="region" aria-label="Recorded requests"><table>
          <caption class="sr-only">Recorded requests, newest first</caption>
          <thead><tr><th scope="col">Time</th><th scope="col">Last user message</th></tr></thead>
          <tbody>${p.data.map((r) => html`<tr><td><a href=${`#/recordings/${seg(workspaceId)}/${seg(r.request_id)}`}>${when(r.created_at)}</a></td><td>${r.preview || '—'}</td></tr>`)}</tbody>
        </table></div><${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>`}`;
}

export function Recordings({ route, me }) {
  const [workspaceId, setWorkspaceId] = useState(route[0] ?? firstWorkspace(me, 'admin'));
  if (route[0] && route[1]) return html`<${Recording} workspaceId=${route[0]} id=${route[1]} />`;
  return html`<${List} me=${me} workspaceId=${workspaceId} setWorkspaceId=${setWorkspaceId} />`;
}
