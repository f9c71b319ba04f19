// Budgets: caps at every scope (instance, workspace, member, key) and the alerts with their delivery state.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Paged, Empty, ConfirmButton, DialogButton, money, when } from '../ui.js';
import { useNames } from '../names.js';
import { CapForm } from './cap-form.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';

const alertStates = { pending: 'Sending', sent: 'Delivered', given_up: 'Delivery failed', recorded: 'Recorded (no webhook set)' };

function Caps({ workspaceId, me }) {
  const path = workspaceId ? `/workspaces/${seg(workspaceId)}/budget-caps` : '/budget-caps';
  const caps = useLoad(() => api('GET', path), [path]);
  const name = useNames(me, workspaceId);
  const [saved, setSaved] = useState(null);
  const after = async (msg) => { await caps.reload(); setSaved(msg); };
  const who = (c) => (c.scope === 'instance' ? 'the whole instance' : c.scope === 'workspace' ? name(c.workspace_id) : `${name(c.person_id ?? c.key_id)} in ${name(c.workspace_id)}`);
  return html`<section aria-labelledby="caps-h">
    <h2 id="caps-h">Caps</h2>
    ${saved && html`<p class="notice" role="status">${saved}</p>`}
    <${Loaded} state=${caps}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No caps${workspaceId ? ' in this workspace' : ''} yet: spending is unlimited. Add one below; requests that would pass it are refused with budget_exceeded.</${Empty}>`
      : html`<${Paged} caption="Budget caps" rows=${d.data} search=${(c) => `${c.scope} ${who(c)} ${c.period}`} head=${['Scope', 'For', 'Amount', 'Period', 'Spent', 'Left', 'Alerts at', '']}
          row=${(c) => html`<tr data-cap=${c.id}>
            <td>${c.scope}</td><td>${who(c)}</td><td>${money(c.amount_micro_usd)}</td><td>${c.period}</td>
            <td>${money(c.spent_micro_usd)}</td><td>${money(c.remaining_micro_usd)}</td><td>${c.alert_thresholds.map((t) => `${t}%`).join(', ') || '—'}</td>
            <td class="actions-row">
              <${DialogButton} label=${`Edit ${c.scope} cap ${money(c.amount_micro_usd)}`} text="Edit" title=${`Edit the ${c.scope} cap for ${who(c)}`}>${(close) => html`<${CapForm}
                workspaceId=${workspaceId} cap=${c} path=${path} done=${(msg) => { close(); after(msg); }} cancel=${html`<button type="button" onClick=${close}>Cancel</button>`} />`}</${DialogButton}>
              <${ConfirmButton} label=${`Delete ${c.scope} cap ${money(c.amount_micro_usd)}`} text="Delete" confirmLabel="Delete cap" question="Delete this cap? Spending under it is no longer limited."
                onConfirm=${async () => { await api('DELETE', `${path}/${seg(c.id)}`); after('Cap deleted.'); }} />
            </td>
          </tr>`} />`)}</${Loaded}>
    <${CapForm} key=${workspaceId} workspaceId=${workspaceId} cap=${null} path=${path} done=${(msg) => after(msg)} />
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
  const admin = me.person.instance_admin;
  const [workspaceId, setWorkspaceId] = useState(admin ? '' : firstWorkspace(me, 'admin'));
  return html`<h1 tabindex="-1">Budgets</h1>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel="Instance-wide caps" role="admin" />
    ${workspaceId || admin ? html`<${Caps} key=${workspaceId} workspaceId=${workspaceId} me=${me} />` : html`<${Empty}>Choose a workspace you administer.</${Empty}>`}
    ${admin && html`<${Alerts} />`}`;
}
