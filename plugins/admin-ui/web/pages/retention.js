// Retention (instance admins): how long each kind of record is kept, Run now with the last run's
// counts, whether traces leave the instance, and each workspace's recording of prompts and replies.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Notice, Empty, when } from '../ui.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';
import { Recording } from './recording.js';

/** The form field of a kind; the API's `param` for it is `periods.<kind>` (ui.js maps the dot). */
const fieldOf = (kind) => `periods_${kind}`;
/** The API's schedule is the cron line and " (UTC)"; an empty line means no scheduled run. */
const unscheduled = (s) => s.trim() === '(UTC)';
const daysText = (d) => (d === null ? 'until deleted' : d === 'expired' ? 'until they expire' : `${d} days`);

/** Only the periods that changed: a number where the text is one, else the text for the API to refuse. */
function changedPeriods(kinds, values) {
  const periods = {};
  for (const k of kinds) {
    const text = values[fieldOf(k.kind)].trim();
    const days = text === '' ? null : Number.isNaN(Number(text)) ? text : Number(text);
    if (days !== k.days) periods[k.kind] = days;
  }
  return periods;
}

function hintOf(k) {
  const parts = [`${k.kind}: default ${daysText(k.default_days)}, ${k.min_days} to ${k.max_days} days.`];
  if (k.default_days === null) parts.push('Empty keeps them until deleted.');
  if (k.per_workspace) parts.push('A workspace that records sets its own period (below); this one applies to the others.');
  return parts.join(' ');
}

function Periods({ view, reload }) {
  const kinds = view.kinds.filter((k) => k.days !== 'expired');
  const expiring = view.kinds.filter((k) => k.days === 'expired');
  const form = useForm(Object.fromEntries(kinds.map((k) => [fieldOf(k.kind), k.days === null ? '' : String(k.days)])));
  const [saved, setSaved] = useState(null);
  return html`<${Form} form=${form} class="short-inputs" title="Periods" submitLabel="Save periods" onSubmit=${async (v) => {
    setSaved(null);
    const periods = changedPeriods(kinds, v);
    if (Object.keys(periods).length) await api('PUT', '/retention/periods', { periods });
    setSaved(Object.keys(periods).length);
    reload();
  }}>
    <p class="hint">Records older than their period are deleted by ${unscheduled(view.schedule) ? 'Run now (no schedule is set)' : `the daily run (${view.schedule})`}. Running totals of budgets are never deleted.</p>
    ${kinds.map((k) => html`<${Field} form=${form} name=${fieldOf(k.kind)} label=${`${k.summary} (days)`} hint=${hintOf(k)}
      type="number" min=${k.min_days} max=${k.max_days} step="1" />`)}
    ${expiring.length > 0 && html`<p class="hint">Removed at each run once expired: ${expiring.map((k) => k.summary.toLowerCase()).join('; ')}.</p>`}
    ${saved !== null && html`<${Notice}>${saved ? `Saved ${saved === 1 ? 'one period' : `${saved} periods`}; the next run uses ${saved === 1 ? 'it' : 'them'}.` : 'Nothing changed.'}</${Notice}>`}
  </${Form}>`;
}

const countText = (n) => (n < 0 ? 'failed' : String(n));

function Runs({ view, reload }) {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState(null);
  const [error, setError] = useState(null);
  const run = view.last_run;
  const runNow = async () => {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      const r = await api('POST', '/retention/runs');
      setMessage(r.running_elsewhere
        ? 'A run is already going on (on this or another replica); its counts show here once it ends.'
        : `Run finished: ${Object.values(r.run.counts).filter((n) => n > 0).reduce((a, b) => a + b, 0)} records deleted.`);
      reload();
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="runs-h">
    <h2 id="runs-h">Runs</h2>
    ${run
      ? html`<p>Last run ${when(run.started_at)} (${run.trigger === 'manual' ? 'Run now' : run.trigger}): ${run.status === 'done' ? 'done' : 'failed'} in ${run.duration_ms} ms.</p>`
      : html`<${Empty}>No run yet. ${unscheduled(view.schedule) ? 'No schedule is set: Run now deletes what is past its period.' : 'The daily run deletes what is past its period; Run now does it at once.'}</${Empty}>`}
    <button type="button" class="primary" disabled=${busy} onClick=${runNow}>${busy ? 'Running…' : 'Run now'}</button>
    ${message && html`<${Notice}>${message}</${Notice}>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${run && html`<div class="table-wrap" tabindex="0" role="region" aria-label="Records deleted by the last run"><table>
      <caption>Records deleted by the last run</caption>
      <thead><tr><th scope="col">Kind</th><th scope="col">Deleted</th></tr></thead>
      <tbody>${Object.entries(run.counts).map(([kind, n]) => html`<tr data-kind=${kind}><td>${kind}</td><td>${countText(n)}</td></tr>`)}</tbody>
    </table></div>`}
  </section>`;
}

/** Whether spans leave the instance: the OTLP host only (its path and headers may carry tokens). */
const TraceExport = ({ exp }) => html`<section aria-labelledby="export-h">
  <h2 id="export-h">Where traces go</h2>
  <p data-testid="trace-export">${exp.enabled
    ? html`Traces leave this instance: one span per request is sent over OTLP to <code>${exp.host}</code> (<code>SVC_OTLP_ENDPOINT</code>).
      The export's headers are secrets and are not shown. Spans never hold prompt or reply text.`
    : html`Traces stay on this instance: <code>SVC_OTLP_ENDPOINT</code> is not set, so no span is exported.`}</p>
</section>`;

export function Retention({ me }) {
  const view = useLoad(() => api('GET', '/retention'));
  const [workspaceId, setWorkspaceId] = useState(firstWorkspace(me));
  return html`<h1 tabindex="-1">Retention</h1>
    <${Loaded} state=${view}>${(v) => html`
      <${Periods} view=${v} reload=${view.reload} />
      <${Runs} view=${v} reload=${view.reload} />
      <${TraceExport} exp=${v.trace_export} />`}</${Loaded}>
    <section aria-labelledby="recording-h">
      <h2 id="recording-h">Recording per workspace</h2>
      <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel=${null} />
      ${workspaceId ? html`<${Recording} key=${workspaceId} workspaceId=${workspaceId} />` : html`<${Empty}>Choose a workspace to see whether it records prompts and replies.</${Empty}>`}
    </section>`;
}
