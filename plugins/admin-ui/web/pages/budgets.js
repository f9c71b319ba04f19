// Budgets: caps at every scope (instance, workspace, member, key) and the alerts with their delivery state.
import { useState } from 'preact/hooks';
import { api, seg, ApiError } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton, money, when } from '../ui.js';
import { WorkspacePicker, defaultWorkspace, microUsd } from './workspace-picker.js';

const periods = [['month', 'month (calendar, UTC)'], ['week', 'week (ISO, UTC)'], ['day', 'day (UTC)'], ['lifetime', 'lifetime']];
const alertStates = { pending: 'Sending', sent: 'Delivered', given_up: 'Delivery failed', recorded: 'Recorded (no webhook set)' };

/** The cap body from the form: dollars → micro-USD, "50, 80" → [50, 80]; refused like the API would. */
function capBody(v) {
  const amount = microUsd(v.amount_micro_usd);
  if (amount === null) throw new ApiError(400, { error: { message: 'Enter an amount in US dollars, e.g. 50 or 12.50 (at most 6 decimals).', param: 'amount_micro_usd' } });
  const body = { amount_micro_usd: amount, period: v.period };
  if (v.alert_thresholds.trim() !== '') body.alert_thresholds = v.alert_thresholds.split(',').map((s) => Number(s.trim()));
  if (v.scope && v.scope !== 'instance') body.scope = v.scope;
  if (v.scope === 'member') body.person_id = v.person_id;
  if (v.scope === 'key') body.key_id = v.key_id;
  return body;
}

function CapForm({ workspaceId, done }) {
  const form = useForm({ scope: workspaceId ? 'workspace' : 'instance', person_id: '', key_id: '', amount_micro_usd: '', period: 'month', alert_thresholds: '' });
  const members = useLoad(() => (workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/members`) : Promise.resolve({ data: [] })), [workspaceId]);
  const keys = useLoad(() => (workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/keys`) : Promise.resolve({ data: [] })), [workspaceId]);
  const scope = form.values.scope;
  return html`<${Form} form=${form} title=${workspaceId ? 'Add a cap in this workspace' : 'Add an instance cap'} submitLabel="Add cap" onSubmit=${async (v) => {
    await api('POST', workspaceId ? `/workspaces/${seg(workspaceId)}/budget-caps` : '/budget-caps', capBody(v));
    form.reset();
    done();
  }}>
    ${workspaceId && html`<${Field} form=${form} name="scope" label="Applies to" type="select" options=${[['workspace', 'the whole workspace'], ['member', 'one member'], ['key', 'one API key']]} />`}
    ${scope === 'member' && html`<${Field} form=${form} name="person_id" label="Member" type="select" options=${[['', 'Choose a member'], ...(members.data?.data ?? []).map((m) => [m.person_id, m.email])]} />`}
    ${scope === 'key' && html`<${Field} form=${form} name="key_id" label="API key" type="select" options=${[['', 'Choose a key'], ...(keys.data?.data ?? []).filter((k) => !k.revoked_at).map((k) => [k.id, k.name])]} />`}
    <${Field} form=${form} name="amount_micro_usd" label="Amount (US dollars)" inputmode="decimal" required />
    <${Field} form=${form} name="period" label="Period" type="select" options=${periods} />
    <${Field} form=${form} name="alert_thresholds" label="Alert at (percent of the amount, comma-separated)" hint="e.g. 50, 80, 100; empty uses the service default" />
  </${Form}>`;
}

function Caps({ workspaceId }) {
  const path = workspaceId ? `/workspaces/${seg(workspaceId)}/budget-caps` : '/budget-caps';
  const caps = useLoad(() => api('GET', path), [path]);
  return html`<section aria-labelledby="caps-h">
    <h2 id="caps-h">Caps</h2>
    <${Loaded} state=${caps}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No caps${workspaceId ? ' in this workspace' : ''} yet: spending is unlimited. Add one below; requests that would pass it are refused with budget_exceeded.</${Empty}>`
      : html`<${Paged} caption="Budget caps" rows=${d.data} head=${['Scope', 'For', 'Amount', 'Period', 'Spent', 'Left', 'Alerts at', '']}
          row=${(c) => html`<tr>
            <td>${c.scope}</td><td>${c.person_id ?? c.key_id ?? c.workspace_id ?? 'instance'}</td><td>${money(c.amount_micro_usd)}</td><td>${c.period}</td>
            <td>${money(c.spent_micro_usd)}</td><td>${money(c.remaining_micro_usd)}</td><td>${c.alert_thresholds.map((t) => `${t}%`).join(', ') || '—'}</td>
            <td><${ConfirmButton} label=${`Delete ${c.scope} cap ${money(c.amount_micro_usd)}`} confirmLabel="Delete cap" question="Delete this cap? Spending under it is no longer limited."
              onConfirm=${async () => { await api('DELETE', `${path}/${seg(c.id)}`); caps.reload(); }} /></td>
          </tr>`} />`)}</${Loaded}>
    <${CapForm} key=${workspaceId} workspaceId=${workspaceId} done=${caps.reload} />
  </section>`;
}

function Alerts() {
  const alerts = useLoad(() => api('GET', '/budget-alerts?limit=1000'));
  const hook = useLoad(() => api('GET', '/budget-alert-webhook'));
  return html`<section aria-labelledby="alerts-h">
    <h2 id="alerts-h">Alerts</h2>
    <p class="hint">${hook.data ? (hook.data.configured ? `Alerts are sent to ${hook.data.host}.` : 'No alert webhook is set: alerts are recorded here only.') : ''}</p>
    <${Loaded} state=${alerts}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No alerts yet. A cap's alert fires once per period when its spend passes a threshold.</${Empty}>`
      : html`<${Paged} caption="Budget alerts" rows=${d.data} head=${['When', 'Scope', 'Threshold', 'Spent of amount', 'Delivery', 'Attempts']}
          row=${(a) => html`<tr><td>${when(a.created_at)}</td><td>${a.scope} ${a.period_key}</td><td>${a.threshold_percent}%</td>
            <td>${money(a.spent_micro_usd)} of ${money(a.amount_micro_usd)}</td><td>${alertStates[a.state] ?? a.state}</td><td>${a.attempts}</td></tr>`} />`)}</${Loaded}>
  </section>`;
}

export function Budgets({ me }) {
  const [workspaceId, setWorkspaceId] = useState(defaultWorkspace(me));
  const admin = me.person.instance_admin;
  return html`<h1 tabindex="-1">Budgets</h1>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel="Instance-wide caps" />
    ${workspaceId || admin ? html`<${Caps} key=${workspaceId} workspaceId=${workspaceId} />` : html`<${Empty}>Choose a workspace you administer.</${Empty}>`}
    ${admin && html`<${Alerts} />`}`;
}
