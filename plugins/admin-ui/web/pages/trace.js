// One request's trace: its record and a timeline of its pipeline phases, upstream model calls and workspace tool calls.
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, money, when } from '../ui.js';
import { useNames } from '../names.js';

const ms = (us) => `${(us / 1000).toFixed(1)} ms`;

/** Timeline rows: each pipeline phase (from the request span), then each child span: model calls (`upstream.attempt`) and tool calls (`tool.call`). */
function rows(spans) {
  const root = spans.find((s) => s.parent_span_id === null) ?? spans[0];
  const phases = Object.entries(root?.attributes['svc.phases_us'] ?? {}).map(([name, [start, dur]]) => ({ name, start, dur, status: 'ok' }));
  let attempt = 0;
  const children = spans.filter((s) => s !== root).map((s) => ({
    name: s.name === 'tool.call' ? `tool ${s.attributes['svc.function_name'] ?? s.attributes['svc.tool'] ?? ''}` : `upstream attempt ${++attempt} (${s.attributes['svc.model'] ?? ''})`,
    start: s.offset_us, dur: s.duration_us, status: String(s.attributes['svc.outcome'] ?? s.status),
  }));
  return { root, items: [...phases, ...children].sort((a, b) => a.start - b.start) };
}

const ruleWords = { explicit: 'the client named it', pinned: 'the workspace pins a model', signal: 'a code block sent it to the code route', classified: 'the classifier matched a route', default: 'no route claimed it: the default model', sticky: 'the conversation kept its earlier decision' };

/** Who sent it and what chose the model: from the request span's attributes. */
function Decision({ root, r, name }) {
  const a = root?.attributes ?? {};
  const rule = a['svc.routing_rule'];
  const conf = a['svc.routing_confidence'];
  return html`<h2>Who and why</h2><dl class="facts">
    <dt>Person</dt><dd>${name(r.person_id)}</dd><dt>API key</dt><dd>${r.key_id ? name(r.key_id) : 'none (signed in)'}</dd>
    <dt>Workspace</dt><dd>${name(r.workspace_id)}</dd>
    <dt>Routing rule</dt><dd>${rule ? `${rule}${ruleWords[rule] ? ` (${ruleWords[rule]})` : ''}` : '—'}</dd>
    <dt>Route</dt><dd>${a['svc.route'] ? html`<code>route/${a['svc.route']}</code>` : '—'}</dd>
    <dt>Confidence</dt><dd>${typeof conf === 'number' ? conf.toFixed(2) : '—'}</dd>
    ${a['svc.routing_reason'] && html`<dt>Reason</dt><dd>${a['svc.routing_reason']}</dd>`}
  </dl>`;
}

/** Each upstream model call in order: model, provider, retry, outcome, duration. */
function Attempts({ spans }) {
  const list = spans.filter((s) => s.name === 'upstream.attempt');
  if (list.length === 0) return html`<h2>Attempts</h2><p class="hint">No model was called (refused before sending, or answered from the service itself).</p>`;
  return html`<h2>Attempts</h2><div class="table-wrap" tabindex="0" role="region" aria-label="Attempts"><table>
    <caption class="sr-only">Upstream attempts, in order</caption>
    <thead><tr>${['#', 'Model', 'Provider', 'Retry', 'Outcome', 'Took'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${list.map((s, i) => html`<tr data-attempt=${i + 1}><td>${i + 1}</td><td>${s.attributes['svc.model'] ?? '—'}</td><td>${s.attributes['svc.provider'] ?? '—'}</td>
      <td>${s.attributes['svc.retry'] ? 'yes' : 'no'}</td><td>${String(s.attributes['svc.outcome'] ?? s.status)}</td><td>${ms(s.duration_us)}</td></tr>`)}</tbody>
  </table></div>`;
}

export function Trace({ id, workspaceId, path: given, back = '#/requests', backLabel = '← All requests', me }) {
  const path = given ?? (workspaceId ? `/workspaces/${seg(workspaceId)}/requests/${seg(id)}` : `/requests/${seg(id)}`);
  const trace = useLoad(() => api('GET', path), [path]);
  const name = useNames(me, workspaceId ?? '');
  return html`<p><a href=${back}>${backLabel}</a></p>
    <h1 tabindex="-1">Request <code>${id}</code></h1>
    <${Loaded} state=${trace}>${({ request: r, spans }) => {
      const { root, items } = rows(spans);
      const total = Math.max(1, root?.duration_us ?? r.latency_ms * 1000, ...items.map((i) => i.start + i.dur));
      return html`<dl class="facts">
          <dt>Time</dt><dd>${when(r.created_at)}</dd>
          <dt>Model</dt><dd>${r.model ?? '—'}</dd><dt>Provider</dt><dd>${r.provider ?? 'not reached'}</dd>
          <dt>Status</dt><dd>${r.status}${r.error_code ? ` (${r.error_code})` : ''}</dd>
          <dt>Tokens</dt><dd>${r.prompt_tokens} in, ${r.completion_tokens} out</dd><dt>Cost</dt><dd>${money(r.cost_micro_usd)}</dd>
          <dt>Latency</dt><dd>${r.latency_ms} ms${r.ttft_ms !== null ? `, first token after ${r.ttft_ms} ms` : ''}</dd>
          <dt>Request id</dt><dd><code>${r.id}</code></dd>
        </dl>
        <${Decision} root=${root} r=${r} name=${name} />
        <${Attempts} spans=${spans} />
        <h2>Timeline</h2>
        ${items.length === 0 ? html`<p>No phase timings were recorded for this request.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Timeline"><table class="timeline">
          <caption class="sr-only">Phases of the request, in order</caption>
          <thead><tr><th scope="col">Phase</th><th scope="col">Starts</th><th scope="col">Takes</th><th scope="col"><span class="sr-only">Bar</span></th></tr></thead>
          <tbody>${items.map((i) => html`<tr data-phase=${i.name}>
            <td>${i.name}${i.status !== 'ok' ? ` (${i.status})` : ''}</td><td>${ms(i.start)}</td><td>${ms(i.dur)}</td>
            <td class="bar"><svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
              <rect x=${(i.start / total) * 100} y="1" width=${Math.max(0.5, (i.dur / total) * 100)} height="8" class=${i.status === 'ok' ? 'ok' : 'bad'} />
            </svg></td>
          </tr>`)}</tbody>
        </table></div>`}`;
    }}</${Loaded}>`;
}
