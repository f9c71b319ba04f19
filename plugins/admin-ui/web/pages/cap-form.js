// A budget cap's form (add and edit): amount in dollars, period, alert thresholds; a cap of $0
// needs an explicit confirmation that says it stops every request it covers.
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field } from '../ui.js';
import { microUsd } from './workspace-picker.js';

export const periods = [['month', 'month (calendar, UTC)'], ['week', 'week (ISO, UTC)'], ['day', 'day (UTC)'], ['lifetime', 'lifetime']];

const thresholdsOf = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

/** Every mistake at once, in words (never the schema's). */
function check(v, editing) {
  const e = {};
  const amount = microUsd(v.amount_micro_usd);
  if (amount === null) e.amount_micro_usd = 'Enter an amount in US dollars, e.g. 50 or 12.50 (at most 6 decimals).';
  else if (amount === 0 && !v.confirm_zero) e.confirm_zero = 'A cap of $0 stops every request it covers. Tick this box if that is what you want, or enter a larger amount.';
  const t = thresholdsOf(v.alert_thresholds);
  if (t.some((x) => !/^\d+$/.test(x) || Number(x) < 1 || Number(x) > 1000)) e.alert_thresholds = 'Enter whole percentages from 1 to 1000 separated by commas, e.g. 50, 80, 100.';
  else if (t.length > 10) e.alert_thresholds = 'Use at most 10 thresholds.';
  if (editing) return e;
  if (v.scope === 'member' && !v.person_id) e.person_id = 'Choose the member this cap limits.';
  if (v.scope === 'key' && !v.key_id) e.key_id = 'Choose the API key this cap limits.';
  return e;
}

function body(v, editing) {
  const out = { amount_micro_usd: microUsd(v.amount_micro_usd), period: v.period };
  if (v.alert_thresholds.trim() !== '' || editing) out.alert_thresholds = thresholdsOf(v.alert_thresholds).map(Number);
  if (editing) return out;
  if (v.scope && v.scope !== 'instance') out.scope = v.scope;
  if (v.scope === 'member') out.person_id = v.person_id;
  if (v.scope === 'key') out.key_id = v.key_id;
  return out;
}

/** `cap` null adds one (in `workspaceId`, or an instance cap); `path` is the caps collection. */
export function CapForm({ workspaceId, cap, path, done, cancel }) {
  const form = useForm({
    scope: cap?.scope ?? (workspaceId ? 'workspace' : 'instance'), person_id: '', key_id: '', period: cap?.period ?? 'month',
    amount_micro_usd: cap ? String(cap.amount_micro_usd / 1e6) : '', alert_thresholds: cap ? cap.alert_thresholds.join(', ') : '', confirm_zero: false,
  }, (v) => check(v, cap));
  const members = useLoad(() => (workspaceId && !cap ? api('GET', `/workspaces/${seg(workspaceId)}/members`) : Promise.resolve({ data: [] })), [workspaceId]);
  const keys = useLoad(() => (workspaceId && !cap ? api('GET', `/workspaces/${seg(workspaceId)}/keys`) : Promise.resolve({ data: [] })), [workspaceId]);
  const scope = form.values.scope;
  const zero = microUsd(form.values.amount_micro_usd) === 0;
  return html`<${Form} form=${form} title=${cap ? null : workspaceId ? 'Add a cap in this workspace' : 'Add an instance cap'} submitLabel=${cap ? 'Save cap' : 'Add cap'} cancel=${cancel} onSubmit=${async (v) => {
    if (cap) await api('PATCH', `${path}/${seg(cap.id)}`, body(v, true));
    else await api('POST', path, body(v, false));
    if (!cap) form.reset();
    return done(cap ? 'Cap saved.' : 'Cap added.');
  }}>
    ${!cap && workspaceId && html`<${Field} form=${form} name="scope" label="Applies to" type="select" options=${[['workspace', 'the whole workspace'], ['member', 'one member'], ['key', 'one API key']]} />`}
    ${!cap && scope === 'member' && html`<${Field} form=${form} name="person_id" label="Member" type="select" options=${[['', 'Choose a member'], ...(members.data?.data ?? []).map((m) => [m.person_id, m.email])]} />`}
    ${!cap && scope === 'key' && html`<${Field} form=${form} name="key_id" label="API key" type="select" options=${[['', 'Choose a key'], ...(keys.data?.data ?? []).filter((k) => !k.revoked_at).map((k) => [k.id, `${k.name} (${k.prefix}…)`])]} />`}
    <${Field} form=${form} name="amount_micro_usd" label="Amount (US dollars)" inputmode="decimal" />
    ${(zero || form.errors.confirm_zero) && html`<${Field} form=${form} name="confirm_zero" type="checkbox" label="Yes, a $0 cap: refuse every request it covers (budget_exceeded) until it is raised or deleted." />`}
    <${Field} form=${form} name="period" label="Period" type="select" options=${periods} />
    <${Field} form=${form} name="alert_thresholds" label="Alert at (percent of the amount, comma-separated)" hint=${cap ? 'e.g. 50, 80, 100; empty sends no alerts' : 'e.g. 50, 80, 100; empty uses the service default'} />
  </${Form}>`;
}
