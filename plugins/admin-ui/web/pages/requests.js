// Requests explorer: recent model requests with filters (server-side pages) and one request's trace.
// Filters can come in the address too: #/requests?error_code=provider_auth_failed (links from Home).
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useForm, useCursors, Form, Field, Loaded, Empty, CursorPager, money, when } from '../ui.js';
import { useNames } from '../names.js';
import { WorkspacePicker, defaultWorkspace } from './workspace-picker.js';
import { Trace } from './trace.js';

export function Requests({ route, me }) {
  return route[0] ? html`<${Trace} id=${route[0]} workspaceId=${route[1] ?? ''} me=${me} />` : html`<${RequestList} me=${me} />`;
}

const blank = { id: '', from: '', to: '', person_id: '', key_id: '', model: '', route: '', routing_rule: '', status: '', error_code: '', outcome: '' };
const rules = [['', 'any'], ['explicit', 'explicit (model named)'], ['pinned', 'pinned'], ['signal', 'signal (code)'], ['classified', 'classified'], ['default', 'default'], ['sticky', 'sticky (conversation)']];
/** datetime-local (the browser's time zone) → ISO for the API. */
const iso = (local) => (local ? new Date(local).toISOString() : '');
const fromHash = () => Object.fromEntries([...new URLSearchParams(location.hash.split('?')[1] ?? '')].filter(([k]) => k in blank));

function check(v) {
  const e = {};
  if (v.status && !/^[1-5]\d\d$/.test(v.status.trim())) e.status = 'Enter an HTTP status such as 200, 402 or 502.';
  if (v.from && v.to && new Date(v.from) >= new Date(v.to)) e.to = 'Pick a time after “From”.';
  return e;
}

function Filters({ form, onFilter, options }) {
  return html`<${Form} form=${form} class="inline filters" submitLabel="Filter" onSubmit=${onFilter}>
    <${Field} form=${form} name="from" label="From" type="datetime-local" />
    <${Field} form=${form} name="to" label="To" type="datetime-local" />
    <${Field} form=${form} name="person_id" label="Person" type="select" options=${[['', 'anyone'], ...options.persons]} />
    <${Field} form=${form} name="key_id" label="API key" type="select" options=${[['', 'any key'], ...options.keys]} />
    <${Field} form=${form} name="model" label="Model" />
    <${Field} form=${form} name="route" label="Route" hint="Its name, without route/" />
    <${Field} form=${form} name="routing_rule" label="Routing rule" type="select" options=${rules} />
    <${Field} form=${form} name="status" label="HTTP status" inputmode="numeric" />
    <${Field} form=${form} name="error_code" label="Error code" />
    <${Field} form=${form} name="outcome" label="Outcome" type="select" options=${[['', 'any'], ['ok', 'succeeded'], ['error', 'failed']]} />
    <${Field} form=${form} name="id" label="Request id (x-svc-request-id)" />
  </${Form}>`;
}

function RequestList({ me }) {
  const [workspaceId, setWorkspaceId] = useState(defaultWorkspace(me));
  const form = useForm({ ...blank, ...fromHash() }, check);
  const [filters, setFilters] = useState(form.values);
  const pages = useCursors();
  const base = workspaceId ? `/workspaces/${seg(workspaceId)}/requests` : '/requests';
  const allowed = workspaceId || me.person.instance_admin;
  const query = () => ({ ...filters, from: iso(filters.from), to: iso(filters.to), status: filters.status.trim() });
  const page = useLoad(() => (allowed ? api('GET', `${base}${qs({ ...query(), cursor: pages.cursor, limit: 25 })}`) : Promise.resolve(null)), [base, JSON.stringify(filters), pages.cursor]);
  const name = useNames(me, workspaceId);
  const people = useLoad(() => (me.person.instance_admin && !workspaceId ? api('GET', '/persons').then((d) => d.data.map((p) => [p.id, p.email]))
    : workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/members`).then((d) => d.data.map((m) => [m.person_id, m.email])) : Promise.resolve([])), [workspaceId]);
  const keys = useLoad(() => (workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/keys`).then((d) => d.data.map((k) => [k.id, `${k.name} (${k.prefix}…)`])) : Promise.resolve([])), [workspaceId]);
  const pick = (id) => { setWorkspaceId(id); pages.reset(); };
  return html`<h1 tabindex="-1">Requests</h1>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${pick} role="admin" />
    <${Filters} form=${form} options=${{ persons: people.data ?? [], keys: keys.data ?? [] }} onFilter=${async (v) => {
      await api('GET', `${base}${qs({ ...v, from: iso(v.from), to: iso(v.to), status: v.status.trim(), limit: 1 })}`);
      setFilters(v);
      pages.reset();
    }} />
    ${!allowed ? html`<${Empty}>Choose a workspace you administer.</${Empty}>` : html`<${Loaded} state=${page}>${(p) => (p.data.length === 0
      ? html`<${Empty}>No requests${pages.cursor ? ' on this page' : ' match'}. Requests appear here a moment after they finish; send one with an API key from a workspace's page.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recent requests"><table class="requests">
          <caption class="sr-only">Recent requests, newest first</caption>
          <thead><tr>${['Time', 'Person', 'Key', ...(workspaceId ? [] : ['Workspace']), 'Model', 'Route', 'Rule', 'Status', 'Cost', 'Latency'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${p.data.map((r) => html`<tr data-request=${r.id}>
            <td><a href=${`#/requests/${seg(r.id)}${workspaceId ? `/${seg(workspaceId)}` : ''}`} aria-label=${`${when(r.created_at)}, request ${r.id}`}>${when(r.created_at)}</a></td>
            <td>${name(r.person_id)}</td><td>${r.key_id ? name(r.key_id) : '—'}</td>${!workspaceId && html`<td>${name(r.workspace_id)}</td>`}
            <td>${r.model ?? '—'}</td><td>${r.route ? `route/${r.route}` : '—'}</td><td>${r.routing_rule ?? '—'}</td>
            <td>${r.status}${r.error_code ? html` <code>${r.error_code}</code>` : ''}</td><td>${money(r.cost_micro_usd)}</td><td>${r.latency_ms} ms</td>
          </tr>`)}</tbody>
        </table></div>
        <${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>`}`;
}
