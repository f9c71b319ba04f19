// Audit log: who changed what, when and from where (instance admins: everything; workspace admins:
// their workspace). Entries are read-only here as everywhere: the API has no way to change them.
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useForm, useCursors, Form, Field, Loaded, Empty, CursorPager, when } from '../ui.js';
import { WorkspacePicker, defaultWorkspace } from './workspace-picker.js';

/** A date field (local day) as the API's ISO time: its start, or for `until` the next day's start. */
function isoOf(day, next) {
  if (!day) return '';
  const d = new Date(`${day}T00:00:00`);
  if (next) d.setDate(d.getDate() + 1);
  return d.toISOString();
}

/** The fields set, each with its value where the log keeps one (free text never is). */
const changes = (e) => e.fields.map((f) => (f in e.values ? `${f} = ${JSON.stringify(e.values[f])}` : f)).join(', ') || '—';

function actorText(e, emails) {
  if (!e.actor_id) return e.action.startsWith('session.') ? 'unknown e-mail' : '—';
  const who = emails.get(e.actor_id) ?? e.actor_id;
  return e.actor_via === 'key' ? `${who} (key ${e.actor_key_id})` : who;
}

export function Audit({ me }) {
  const admin = me.person.instance_admin;
  const [workspaceId, setWorkspaceId] = useState(admin ? '' : (me.workspaces.find((w) => w.role === 'admin')?.id ?? defaultWorkspace(me)));
  const form = useForm({ action: '', outcome: '', since: '', until: '' });
  const [filters, setFilters] = useState(form.values);
  const pages = useCursors();
  const base = workspaceId ? `/workspaces/${seg(workspaceId)}/audit-entries` : '/audit-entries';
  const query = (v) => ({ action: v.action.trim(), outcome: v.outcome, since: isoOf(v.since, false), until: isoOf(v.until, true) });
  const allowed = workspaceId || admin;
  const page = useLoad(() => (allowed ? api('GET', `${base}${qs({ ...query(filters), cursor: pages.cursor, limit: 25 })}`) : Promise.resolve(null)), [base, JSON.stringify(filters), pages.cursor]);
  // Instance admins see e-mails instead of person ids.
  const persons = useLoad(() => (admin ? api('GET', '/persons').then((d) => d.data) : Promise.resolve([])), [admin]);
  const emails = new Map((persons.data ?? []).map((p) => [p.id, p.email]));
  const pick = (id) => { setWorkspaceId(id); pages.reset(); };
  return html`<h1 tabindex="-1">Audit log</h1>
    <p class="hint">Every change made through the admin API, sign-ins and failed sign-ins, and tools approved for good. Entries cannot be changed or deleted; they are kept 13 months (Retention). Values of secrets and any free text are never kept, only the names of the fields set.</p>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${pick} role="admin" allLabel="Everything (instance)" />
    <${Form} form=${form} class="inline" submitLabel="Filter" onSubmit=${async (v) => {
      if (allowed) await api('GET', `${base}${qs({ ...query(v), limit: 1 })}`);
      setFilters(v);
      pages.reset();
    }}>
      <${Field} form=${form} name="action" label="Action" hint="e.g. keys.create, session.sign_in" />
      <${Field} form=${form} name="outcome" label="Outcome" type="select" options=${[['', 'any'], ['success', 'succeeded'], ['failure', 'failed']]} />
      <${Field} form=${form} name="since" label="From (day)" type="date" />
      <${Field} form=${form} name="until" label="To (day)" type="date" />
    </${Form}>
    ${!allowed ? html`<${Empty}>Choose a workspace you administer.</${Empty}>` : html`<${Loaded} state=${page}>${(p) => (p.data.length === 0
      ? html`<${Empty}>No entries${pages.cursor ? ' on this page' : ' match'}.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Audit entries"><table>
          <caption class="sr-only">Audit entries, newest first</caption>
          <thead><tr>${['Time', 'Action', 'Outcome', 'Who', 'From', 'Resource', 'Changed'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${p.data.map((e) => html`<tr data-action=${e.action}>
            <td>${when(e.created_at)}</td>
            <td><code>${e.action}</code></td>
            <td>${e.outcome === 'success' ? 'succeeded' : `failed (${e.error_code})`}</td>
            <td>${actorText(e, emails)}</td>
            <td>${e.client_address ?? '—'}</td>
            <td>${e.resource_type}${e.resource_id ? html` <code>${e.resource_id}</code>` : ''}</td>
            <td>${changes(e)}</td>
          </tr>`)}</tbody>
        </table></div>
        <${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>`}`;
}
