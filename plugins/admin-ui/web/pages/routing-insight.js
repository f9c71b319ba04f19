// The routing page's insight: try a prompt (each route's score and what auto would decide), and
// per route the recent prompts it claimed and those that fell to the default model.
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Empty, when } from '../ui.js';
import { useState } from 'preact/hooks';

const pct = (x) => (x === null || x === undefined ? '—' : `${Math.round(x * 100)} %`);
const num = (x) => x.toFixed(2);

function Explain({ base }) {
  const form = useForm({ prompt: '' });
  const [result, setResult] = useState(null);
  return html`<${Form} form=${form} title="Try a prompt" submitLabel="Explain" onSubmit=${async (v) => setResult(await api('POST', `${base}/routing/explain`, { prompt: v.prompt }))}>
    <${Field} form=${form} name="prompt" label="Prompt" type="textarea" hint="Scored as auto would score it; no model is called, and the prompt is neither stored nor logged." required />
    ${result && html`<div role="status">
      <p>Decision: <strong>${result.decision.route ? `route/${result.decision.route}` : result.decision.model ?? 'no model'}</strong>
        (rule ${result.decision.rule}${result.decision.reason ? `, ${result.decision.reason}` : ''}${result.decision.confidence !== null ? `, confidence ${pct(result.decision.confidence)}` : ''}).
        ${result.none !== null ? html` Probability that no route fits: ${pct(result.none)}.` : ''}
        ${result.classifier.state !== 'ready' ? html` <span class="error">The classifier is ${result.classifier.state}.</span>` : ''}</p>
      ${result.scores.length > 0 && html`<div class="table-wrap" tabindex="0" role="region" aria-label="Route scores"><table><caption>Route scores (${result.classifier.encoder} encoder, first ${result.classified_chars} characters read)</caption>
        <thead><tr><th scope="col">Route</th><th scope="col">Confidence</th><th scope="col">Needs</th><th scope="col">Centroid</th><th scope="col">Nearest text</th><th scope="col">Lexical</th></tr></thead>
        <tbody>${result.scores.map((s) => html`<tr><td><code>route/${s.route}</code></td><td>${pct(s.confidence)}</td><td>${pct(s.threshold)}</td><td>${num(s.centroid)}</td><td>${num(s.nearest)}</td><td>${num(s.lexical)}</td></tr>`)}</tbody>
      </table></div>`}
    </div>`}
  </${Form}>`;
}

function Decisions({ caption, rows }) {
  if (rows.length === 0) return html`<p>${caption}: none yet.</p>`;
  // Wrapped so a narrow screen scrolls the table, not the page.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${caption}><table><caption>${caption}</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Prompt</th><th scope="col">Reason</th><th scope="col">Confidence</th></tr></thead>
    <tbody>${rows.map((d) => html`<tr><td>${when(d.at)}</td><td>${d.text ?? html`<em>not recorded (${d.chars} characters)</em>`}</td><td>${d.reason ?? d.rule}</td><td>${pct(d.confidence)}</td></tr>`)}</tbody>
  </table></div>`;
}

export function RoutingInsight({ workspaceId }) {
  const base = `/workspaces/${seg(workspaceId)}`;
  const recent = useLoad(() => api('GET', `${base}/routing/recent`), [workspaceId]);
  return html`<section aria-labelledby="routing-insight-h">
    <h3 id="routing-insight-h">How auto decides</h3>
    <${Explain} base=${base} />
    <h4>Recent decisions</h4>
    <p class="hint">What this replica routed lately. Prompt text is shown only where the workspace records prompts (Recording); otherwise only its length.</p>
    <button type="button" onClick=${() => recent.reload()}>Refresh</button>
    <${Loaded} state=${recent}>${(r) => (Object.keys(r.claimed).length === 0 && r.fell_to_default.length === 0
      ? html`<${Empty}>No auto requests yet.</${Empty}>`
      : html`${Object.entries(r.claimed).map(([name, rows]) => html`<${Decisions} caption=${`Claimed by route/${name}`} rows=${rows} />`)}
          <${Decisions} caption="Fell to the default model" rows=${r.fell_to_default} />`)}</${Loaded}>
  </section>`;
}
