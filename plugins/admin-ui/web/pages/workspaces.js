// Workspaces: the list, adding one, and a workspace's page (members and API keys).
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, when } from '../ui.js';
import { Members } from './members.js';
import { Keys } from './keys.js';
import { Routing } from './routing.js';
import { ProviderKeys } from './provider-keys.js';
import { Recording } from './recording.js';

export function Workspaces({ route, me }) {
  return route[0] ? html`<${Workspace} id=${route[0]} me=${me} />` : html`<${WorkspaceList} me=${me} />`;
}

function WorkspaceList({ me }) {
  const admin = me.person.instance_admin;
  const list = useLoad(() => api('GET', `/workspaces${admin ? '?scope=all' : ''}`), [admin]);
  const form = useForm({ name: '' }, (v) => ({ name: v.name.trim() === '' ? 'Give the workspace a name, e.g. Research.' : null }));
  return html`<h1 tabindex="-1">Workspaces</h1>
    <${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No workspaces yet. ${admin ? 'Add one below, then add members and API keys on its page.' : 'Ask an instance admin to add you to one.'}</${Empty}>`
      : html`<${Paged} caption="Workspaces" rows=${d.data} search=${(w) => w.name} head=${['Name', 'Your role', 'Created']}
          row=${(w) => html`<tr><td><a href=${`#/workspaces/${seg(w.id)}`}>${w.name}</a></td><td>${w.role ?? '—'}</td><td>${when(w.created_at)}</td></tr>`} />`)}</${Loaded}>
    ${admin && html`<${Form} form=${form} title="Add a workspace" submitLabel="Add workspace" onSubmit=${async (v) => {
      const ws = await api('POST', '/workspaces', { name: v.name.trim() });
      location.hash = `#/workspaces/${seg(ws.id)}?added=1`;
    }}>
      <${Field} form=${form} name="name" label="Workspace name" maxlength="200" hint="Unique on this instance, e.g. Research." />
    </${Form}>`}`;
}

function Workspace({ id, me }) {
  const ws = useLoad(() => api('GET', `/workspaces/${seg(id)}`), [id]);
  return html`<${Loaded} state=${ws}>${(w) => {
    const canAdmin = w.role === 'admin' || me.person.instance_admin;
    return html`<p><a href="#/workspaces">← All workspaces</a></p>
      <h1 tabindex="-1">${w.name}</h1>
      ${/[?&]added=1/.test(location.hash) && html`<p class="notice" role="status">Workspace ${w.name} added. Next: add members, create an API key, and set up routing below.</p>`}
      <p class="hint">Workspace id <code>${w.id}</code>. Your role: ${w.role ?? 'instance admin'}.</p>
      ${canAdmin && html`<${Rename} ws=${w} reload=${ws.reload} />`}
      <${Keys} workspaceId=${w.id} me=${canAdmin ? me : null} />
      <${Members} workspaceId=${w.id} me=${me} canManage=${canAdmin} />
      ${canAdmin && html`<${Routing} workspaceId=${w.id} /><${ProviderKeys} workspaceId=${w.id} /><${Recording} workspaceId=${w.id} />`}`;
  }}</${Loaded}>`;
}

function Rename({ ws, reload }) {
  const form = useForm({ name: ws.name }, (v) => ({ name: v.name.trim() === '' ? 'Give the workspace a name.' : null }));
  return html`<${Form} form=${form} class="inline" submitLabel="Rename" onSubmit=${async (v) => {
    await api('PATCH', `/workspaces/${seg(ws.id)}`, { name: v.name.trim() });
    reload();
    return `Renamed to ${v.name.trim()}.`;
  }}>
    <${Field} form=${form} name="name" label="Workspace name" maxlength="200" />
  </${Form}>`;
}
