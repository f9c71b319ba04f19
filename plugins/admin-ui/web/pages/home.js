// Home: the instance (or one workspace) at a glance over a chosen range: requests, errors, spend,
// latency, the busiest models, routes, persons and keys, budget use against caps, upstream errors.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Empty, Paged, money } from '../ui.js';
import { Bars, CapMeter } from '../bars.js';
import { useNames } from '../names.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';

const ranges = [['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days']];
const label = (iso, range) => (range === '24h' ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : new Date(iso).toLocaleDateString());
const ms = (v) => (v === null ? '—' : `${v} ms`);

function Figures({ d }) {
  const t = d.totals;
  const rate = t.requests ? `${((t.errors / t.requests) * 100).toFixed(1)}%` : '—';
  const items = [['Requests', t.requests], ['Errors', `${t.errors} (${rate})`], ['Spend', money(t.cost_micro_usd)], ['Latency p50', ms(t.p50_ms)], ['Latency p95', ms(t.p95_ms)]];
  return html`<ul class="figures" aria-label="Totals">${items.map(([k, v]) => html`<li class="figure"><span class="hint">${k}</span><span class="value">${v}</span></li>`)}</ul>`;
}

function Top({ caption, rows, name, empty }) {
  if (rows.length === 0) return html`<section><p class="caption">${caption}</p><p class="hint">${empty}</p></section>`;
  return html`<section><${Paged} caption=${caption} rows=${rows} head=${['Name', 'Requests', 'Spend']}
    row=${(r) => html`<tr><td>${name(r.id)}</td><td>${r.requests}</td><td>${money(r.cost_micro_usd)}</td></tr>`} /></section>`;
}

function Caps({ workspaceId, name }) {
  const caps = useLoad(() => api('GET', workspaceId ? `/workspaces/${seg(workspaceId)}/budget-caps` : '/budget-caps').catch(() => ({ data: [] })), [workspaceId]);
  return html`<section aria-labelledby="caps-use-h"><h2 id="caps-use-h">Budget use</h2>
    <${Loaded} state=${caps}>${(c) => (c.data.length === 0
      ? html`<${Empty}>No caps: spending is unlimited. <a href="#/budgets">Add a cap</a>.</${Empty}>`
      : html`<div class="charts">${c.data.map((cap) => html`<${CapMeter} label=${`${cap.scope === 'instance' ? 'Instance' : `${cap.scope} ${name(cap.person_id ?? cap.key_id ?? cap.workspace_id)}`}, ${cap.period}`}
          spent=${cap.spent_micro_usd} amount=${cap.amount_micro_usd} />`)}</div>`)}</${Loaded}>
  </section>`;
}

export function Home({ me }) {
  const admin = me.person.instance_admin;
  const [workspaceId, setWorkspaceId] = useState(admin ? '' : firstWorkspace(me, 'admin'));
  const [range, setRange] = useState('24h');
  const name = useNames(me, workspaceId);
  const path = workspaceId ? `/workspaces/${seg(workspaceId)}/dashboard` : '/dashboard';
  const data = useLoad(() => api('GET', `${path}?range=${range}`), [path, range]);
  return html`<h1 tabindex="-1">Home</h1>
    <div class="toolbar">
      <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel="The whole instance" role="admin" />
      <div class="field picker"><label for="range-pick">Time range</label>
        <select id="range-pick" value=${range} onChange=${(e) => setRange(e.currentTarget.value)}>${ranges.map(([v, t]) => html`<option value=${v}>${t}</option>`)}</select></div>
    </div>
    <${Loaded} state=${data}>${(d) => html`
      <${Figures} d=${d} />
      ${d.totals.requests === 0 && html`<${Empty}>No requests in this range yet. Create an API key on a <a href="#/workspaces">workspace's page</a> and send a request, or open <a href="#/chat">Chat</a>.</${Empty}>`}
      <div class="charts">
        <${Bars} title="Requests" points=${d.series.map((b) => ({ label: label(b.start, range), value: b.requests }))} />
        <${Bars} title="Errors" points=${d.series.map((b) => ({ label: label(b.start, range), value: b.errors, bad: true }))} />
        <${Bars} title="Spend" format=${money} points=${d.series.map((b) => ({ label: label(b.start, range), value: b.cost_micro_usd }))} />
      </div>
      <h2>Busiest</h2>
      <div class="charts">
        <${Top} caption="Top models" rows=${d.top.models} name=${(id) => id ?? 'no model (refused before one was chosen)'} empty="No model was used." />
        <${Top} caption="Top routes" rows=${d.top.routes} name=${(id) => `route/${id}`} empty="No request went through a route." />
        <${Top} caption="Top persons" rows=${d.top.persons} name=${name} empty="Nobody sent a request." />
        <${Top} caption="Top API keys" rows=${d.top.keys} name=${(id) => (id ? name(id) : 'signed in (no key)')} empty="No key was used." />
        ${!workspaceId && html`<${Top} caption="Top workspaces" rows=${d.top.workspaces} name=${name} empty="No workspace was used." />`}
      </div>
      <${Caps} workspaceId=${workspaceId} name=${name} />
      <h2>Upstream errors by provider</h2>
      ${d.upstream_errors.length === 0 ? html`<p class="hint">No provider failed a request in this range.</p>`
        : html`<${Paged} caption="Upstream errors by provider" rows=${d.upstream_errors} head=${['Provider', 'Error', 'Requests']}
            row=${(e) => html`<tr><td>${e.provider}</td><td><a href=${`#/requests?error_code=${encodeURIComponent(e.error_code)}`}>${e.error_code}</a></td><td>${e.count}</td></tr>`} />`}`}
    </${Loaded}>`;
}
