// One request's trace: its record and a timeline of its pipeline phases, upstream model calls and workspace tool calls.
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, money, when } from '../ui.js';

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

export function Trace({ id, workspaceId }) {
  const path = workspaceId ? `/workspaces/${seg(workspaceId)}/requests/${seg(id)}` : `/requests/${seg(id)}`;
  const trace = useLoad(() => api('GET', path), [path]);
  return html`<p><a href="#/requests">← All requests</a></p>
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
          <dt>Workspace</dt><dd><code>${r.workspace_id ?? '—'}</code></dd><dt>Key</dt><dd><code>${r.key_id ?? '—'}</code></dd>
        </dl>
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
