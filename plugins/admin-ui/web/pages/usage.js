// Usage: spend over time, grouped by workspace, person, key, provider or model, as a chart and a
// table; and the export of the period's usage records as CSV or JSON lines.
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, money } from '../ui.js';
import { SpendChart } from '../chart.js';
import { WorkspacePicker, defaultWorkspace } from './workspace-picker.js';

const dims = [['workspace', 'workspace'], ['person', 'person'], ['key', 'API key'], ['model', 'model'], ['provider', 'provider']];
const isoDay = (t) => new Date(t).toISOString().slice(0, 10);
/** The chart shows the biggest groups one by one and the rest together. */
const shown = 7;

/** Names for the ids a report groups by: workspaces, persons (instance admins) and the chosen workspace's keys. */
async function loadNames(me, workspaceId) {
  const names = new Map();
  const admin = me.person.instance_admin;
  const [workspaces, persons, keys] = await Promise.all([
    admin ? api('GET', '/workspaces?scope=all').then((d) => d.data) : Promise.resolve(me.workspaces),
    admin ? api('GET', '/persons').then((d) => d.data) : Promise.resolve([]),
    workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/keys`).then((d) => d.data).catch(() => []) : Promise.resolve([]),
  ]);
  for (const w of workspaces) names.set(w.id, w.name);
  for (const p of persons) names.set(p.id, p.email);
  for (const k of keys) names.set(k.id, `${k.name} (${k.prefix}…)`);
  return names;
}

function chartGroups(report, name) {
  const groups = report.groups ?? [{ id: 'all', series: report.series }];
  const top = groups.slice(0, shown).map((g) => ({ label: name(g.id), series: g.series }));
  const rest = groups.slice(shown);
  if (rest.length) top.push({ label: `${rest.length} more`, series: rest.flatMap((g) => g.series) });
  return top;
}

/**
 * The export of the shown period (and workspace) as a plain link: the browser streams the file to
 * disk with the session cookie (a GET needs no CSRF header), so a year of records never sits in
 * the page's memory as a blob would.
 */
function Export({ path, query }) {
  const form = useForm({ format: 'csv', granularity: 'request', model: '', provider: '' });
  const href = `/admin/v1${path}/export${qs({ from: query.from, to: query.to, ...form.values })}`;
  return html`<form class="card inline" aria-labelledby="usage-export" onSubmit=${(e) => e.preventDefault()}>
    <h2 id="usage-export">Export ${query.from} to ${query.to}</h2>
    <${Field} form=${form} name="format" label="Format" type="select" options=${[['csv', 'CSV'], ['jsonl', 'JSON lines']]} />
    <${Field} form=${form} name="granularity" label="Rows" type="select" options=${[['request', 'One per request'], ['day', 'One per day']]} />
    <${Field} form=${form} name="model" label="Model (optional)" />
    <${Field} form=${form} name="provider" label="Provider (optional)" />
    <a class="button" href=${href} download>Download</a>
  </form>`;
}

export function Usage({ me }) {
  const [workspaceId, setWorkspaceId] = useState(defaultWorkspace(me));
  const form = useForm({ group_by: 'model', from: isoDay(Date.now() - 29 * 86_400_000), to: isoDay(Date.now()) });
  const [query, setQuery] = useState(form.values);
  const path = workspaceId ? `/workspaces/${seg(workspaceId)}/spend` : '/spend';
  const report = useLoad(() => (workspaceId || me.person.instance_admin ? api('GET', `${path}${qs(query)}`) : Promise.resolve(null)), [path, JSON.stringify(query)]);
  const names = useLoad(() => loadNames(me, workspaceId), [workspaceId]);
  const name = (id) => (id === null ? '(none)' : (names.data?.get(id) ?? id));
  const label = dims.find(([k]) => k === query.group_by)?.[1] ?? query.group_by;
  return html`<h1 tabindex="-1">Usage</h1>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} />
    <${Form} form=${form} class="inline" submitLabel="Show" onSubmit=${async (v) => {
      await api('GET', `${path}${qs(v)}`);
      setQuery(v);
    }}>
      <${Field} form=${form} name="group_by" label="Spend by" type="select" options=${dims} />
      <${Field} form=${form} name="from" label="From" type="date" />
      <${Field} form=${form} name="to" label="To" type="date" />
    </${Form}>
    ${(workspaceId || me.person.instance_admin) && html`<${Export} path=${path} query=${query} />`}
    ${!workspaceId && !me.person.instance_admin
      ? html`<${Empty}>Choose a workspace you administer to see its spend.</${Empty}>`
      : html`<${Loaded} state=${report}>${(r) => (r.total.requests === 0
        ? html`<${Empty}>No requests from ${r.from} to ${r.to}. Send a chat request with an API key (Workspaces → API keys); its spend shows here.</${Empty}>`
        : html`<p>Total ${money(r.total.cost_micro_usd)} over ${r.total.requests} requests (${r.total.prompt_tokens} prompt and ${r.total.completion_tokens} completion tokens), ${r.from} to ${r.to}.</p>
          <${SpendChart} title=${`Spend by ${label}`} groups=${chartGroups(r, name)} from=${r.from} to=${r.to} />
          <${Paged} caption=${`Spend by ${label}`} rows=${r.groups ?? []} head=${[label, 'Spend', 'Requests', 'Prompt tokens', 'Completion tokens']}
            row=${(g) => html`<tr><td>${name(g.id)}</td><td>${money(g.cost_micro_usd)}</td><td>${g.requests}</td><td>${g.prompt_tokens}</td><td>${g.completion_tokens}</td></tr>`} />`)}</${Loaded}>`}`;
}
