// A workspace's routing: settings (default and pinned model, routing on/off, code route) and routes.
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton, Notice } from '../ui.js';
import { useState } from 'preact/hooks';
import { RoutingInsight } from './routing-insight.js';

const orNull = (s) => (s.trim() === '' ? null : s.trim());
const list = (s, sep) => s.split(sep).map((x) => x.trim()).filter(Boolean);

function Settings({ base, settings, reload }) {
  const form = useForm({
    default_model: settings.default_model ?? '', pinned_model: settings.pinned_model ?? '', routing_enabled: settings.routing_enabled, code_route: settings.code_route ?? '',
  });
  const [saved, setSaved] = useState(false);
  return html`<${Form} form=${form} title="Routing settings" submitLabel="Save settings" onSubmit=${async (v) => {
    setSaved(false);
    await api('PATCH', `${base}/routing`, { default_model: orNull(v.default_model), pinned_model: orNull(v.pinned_model), routing_enabled: v.routing_enabled, code_route: orNull(v.code_route) });
    setSaved(true);
    reload();
  }}>
    ${settings.needs_model && html`<p class="error">A model these settings name was removed: ${settings.missing_models.join(', ')}.</p>`}
    <${Field} form=${form} name="default_model" label="Default model" hint="Where model auto sends what no route claims, e.g. local:meta-llama/Llama-3.1-8B-Instruct" />
    <${Field} form=${form} name="pinned_model" label="Pinned model (optional)" hint="When set, auto sends every request here." />
    <${Field} form=${form} name="code_route" label="Code route (optional)" hint="The route a fenced code block goes to." />
    <${Field} form=${form} name="routing_enabled" label="Routing on" type="checkbox" />
    ${saved && html`<${Notice}>Routing settings saved.</${Notice}>`}
  </${Form}>`;
}

export function Routing({ workspaceId }) {
  const base = `/workspaces/${seg(workspaceId)}`;
  const settings = useLoad(() => api('GET', `${base}/routing`), [workspaceId]);
  const routes = useLoad(() => api('GET', `${base}/routes`), [workspaceId]);
  const form = useForm({ name: '', model: '', fallbacks: '', description: '', examples: '', enabled: true });
  return html`<section aria-labelledby="routing-h">
    <h2 id="routing-h">Routing</h2>
    <${Loaded} state=${settings}>${(s) => html`<${Settings} base=${base} settings=${s} reload=${settings.reload} />`}</${Loaded}>
    <${Loaded} state=${routes}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No routes yet. Add one below; clients then send model <code>auto</code> or <code>${'route/<name>'}</code>.</${Empty}>`
      : html`<${Paged} caption="Routes" rows=${d.data} head=${['Name', 'Model', 'Fallbacks', 'Enabled', '']}
          row=${(r) => html`<tr><td><code>route/${r.name}</code>${r.needs_model ? html` <span class="badge could_not_connect">model removed</span>` : ''}</td>
            <td>${r.model}</td><td>${r.fallbacks.join(', ') || '—'}</td><td>${r.enabled ? 'yes' : 'no'}</td>
            <td><${ConfirmButton} label=${`Remove route ${r.name}`} confirmLabel="Remove route" question=${`Remove the route ${r.name}? Requests naming route/${r.name} are refused.`}
              onConfirm=${async () => { await api('DELETE', `${base}/routes/${seg(r.name)}`); routes.reload(); }} /></td></tr>`} />`)}</${Loaded}>
    <${Form} form=${form} title="Add a route" submitLabel="Add route" onSubmit=${async (v) => {
      await api('POST', `${base}/routes`, { name: v.name, model: v.model, fallbacks: list(v.fallbacks, ','), description: v.description, examples: list(v.examples, '\n'), enabled: v.enabled });
      form.reset();
      routes.reload();
    }}>
      <${Field} form=${form} name="name" label="Route name" hint="Lowercase letters, numbers, dashes and underscores." required />
      <${Field} form=${form} name="model" label="Route model" required />
      <${Field} form=${form} name="fallbacks" label="Fallback models (comma-separated, optional)" />
      <${Field} form=${form} name="description" label="What the route is for" type="textarea" />
      <${Field} form=${form} name="examples" label="Example requests (one per line)" type="textarea" />
      <${Field} form=${form} name="enabled" label="Enabled" type="checkbox" />
    </${Form}>
    <${RoutingInsight} workspaceId=${workspaceId} />
  </section>`;
}
