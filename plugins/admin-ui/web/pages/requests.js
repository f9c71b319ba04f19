// Requests: recent model requests with filters (server-side pages), and one request's trace.
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useForm, useCursors, Form, Field, Loaded, Empty, CursorPager, money, when } from '../ui.js';
import { WorkspacePicker, defaultWorkspace } from './workspace-picker.js';
import { Trace } from './trace.js';

export function Requests({ route, me }) {
  return route[0] ? html`<${Trace} id=${route[0]} workspaceId=${route[1] ?? ''} />` : html`<${RequestList} me=${me} />`;
}

function RequestList({ me }) {
  const [workspaceId, setWorkspaceId] = useState(defaultWorkspace(me));
  const form = useForm({ id: '', model: '', outcome: '' });
  const [filters, setFilters] = useState(form.values);
  const pages = useCursors();
  const base = workspaceId ? `/workspaces/${seg(workspaceId)}/requests` : '/requests';
  const cursor = pages.cursor;
  const allowed = workspaceId || me.person.instance_admin;
  const page = useLoad(() => (allowed ? api('GET', `${base}${qs({ ...filters, cursor, limit: 25 })}`) : Promise.resolve(null)), [base, JSON.stringify(filters), cursor]);
  const pick = (id) => { setWorkspaceId(id); pages.reset(); };
  return html`<h1 tabindex="-1">Requests</h1>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${pick} />
    <${Form} form=${form} class="inline" submitLabel="Filter" onSubmit=${async (v) => {
      await api('GET', `${base}${qs({ ...v, limit: 1 })}`);
      setFilters(v);
      pages.reset();
    }}>
      <${Field} form=${form} name="id" label="Request id (x-svc-request-id)" />
      <${Field} form=${form} name="model" label="Model" />
      <${Field} form=${form} name="outcome" label="Outcome" type="select" options=${[['', 'any'], ['ok', 'succeeded'], ['error', 'failed']]} />
    </${Form}>
    ${!allowed ? html`<${Empty}>Choose a workspace you administer.</${Empty}>` : html`<${Loaded} state=${page}>${(p) => (p.data.length === 0
      ? html`<${Empty}>No requests${cursor ? ' on this page' : ' match'}. Requests appear here a moment after they finish; send one with an API key from a workspace's page.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recent requests"><table>
          <caption class="sr-only">Recent requests, newest first</caption>
          <thead><tr>${['Time', 'Request id', 'Model', 'Status', 'Tokens in/out', 'Cost', 'Latency'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${p.data.map((r) => html`<tr>
            <td>${when(r.created_at)}</td>
            <td><a href=${`#/requests/${seg(r.id)}${workspaceId ? `/${seg(workspaceId)}` : ''}`}><code>${r.id}</code></a></td>
            <td>${r.model ?? '—'}</td><td>${r.status}${r.error_code ? ` ${r.error_code}` : ''}</td>
            <td>${r.prompt_tokens}/${r.completion_tokens}</td><td>${money(r.cost_micro_usd)}</td><td>${r.latency_ms} ms</td>
          </tr>`)}</tbody>
        </table></div>
        <${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>`}`;
}
