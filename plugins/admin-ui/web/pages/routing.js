// A workspace's routing: settings (default and pinned model, routing on/off, code route) and its
// routes, each editable in place; models are picked from the workspace's models.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton, DialogButton } from '../ui.js';
import { listModels } from '../chat/model-api.js';
import { RouteForm } from './route-form.js';
import { RoutingInsight } from './routing-insight.js';

const orNull = (s) => (s === '' ? null : s);
const pick = (names, current, none) => [['', none], ...[...new Set([...names, ...(current ? [current] : [])])].map((n) => [n, n])];

function Settings({ base, settings, routes, models, after }) {
  const form = useForm({
    default_model: settings.default_model ?? '', pinned_model: settings.pinned_model ?? '', routing_enabled: settings.routing_enabled, code_route: settings.code_route ?? '',
  });
  return html`<${Form} form=${form} title="Routing settings" submitLabel="Save settings" onSubmit=${async (v) => {
    await api('PATCH', `${base}/routing`, { default_model: orNull(v.default_model), pinned_model: orNull(v.pinned_model), routing_enabled: v.routing_enabled, code_route: orNull(v.code_route) });
    after('Routing settings saved.');
  }}>
    ${settings.needs_model && html`<p class="error">A model these settings name was removed: ${settings.missing_models.join(', ')}. Choose another.</p>`}
    <${Field} form=${form} name="default_model" label="Default model" type="select" options=${pick(models, settings.default_model, 'None (requests no route claims are refused)')} hint="Where model auto sends what no route claims." />
    <${Field} form=${form} name="pinned_model" label="Pinned model (optional)" type="select" options=${pick(models, settings.pinned_model, 'None')} hint="When set, auto sends every request here." />
    <${Field} form=${form} name="code_route" label="Code route (optional)" type="select" options=${pick(routes.map((r) => r.name), settings.code_route, 'None')} hint="The route a fenced code block goes to." />
    <${Field} form=${form} name="routing_enabled" label="Routing on" type="checkbox" />
  </${Form}>`;
}

export function Routing({ workspaceId }) {
  const base = `/workspaces/${seg(workspaceId)}`;
  const settings = useLoad(() => api('GET', `${base}/routing`), [workspaceId]);
  const routes = useLoad(() => api('GET', `${base}/routes`), [workspaceId]);
  // The models clients of this workspace may name: GET /v1/models without auto and the routes.
  const models = useLoad(() => listModels(workspaceId).then((d) => d.map((m) => m.id).filter((id) => id !== 'auto' && !id.startsWith('route/'))).catch(() => []), [workspaceId]);
  const [saved, setSaved] = useState(null);
  const names = models.data ?? [];
  const after = async (msg) => { await Promise.all([routes.reload(), settings.reload()]); setSaved(msg); };
  return html`<section aria-labelledby="routing-h">
    <h2 id="routing-h">Routing</h2>
    ${saved && html`<p class="notice" role="status">${saved}</p>`}
    ${names.length === 0 && models.data && html`<p class="hint">This workspace has no models to pick yet: an instance admin adds providers and models first.</p>`}
    <${Loaded} state=${settings}>${(s) => html`<${Settings} key=${JSON.stringify(s)} base=${base} settings=${s} routes=${routes.data?.data ?? []} models=${names} after=${after} />`}</${Loaded}>
    <${Loaded} state=${routes}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No routes yet. Add one below; clients then send model <code>auto</code> or <code>${'route/<name>'}</code>.</${Empty}>`
      : html`<${Paged} caption="Routes" rows=${d.data} search=${(r) => `${r.name} ${r.model} ${r.description}`} head=${['Name', 'Model', 'Fallbacks', 'Enabled', '']}
          row=${(r) => html`<tr data-route=${r.name}><td><code>route/${r.name}</code>${r.needs_model ? html` <span class="badge could_not_connect">model removed</span>` : ''}</td>
            <td>${r.model}</td><td>${r.fallbacks.join(' → ') || '—'}</td><td>${r.enabled ? 'yes' : 'no'}</td>
            <td class="actions-row">
              <${DialogButton} label=${`Edit route ${r.name}`} text="Edit" title=${`Edit route/${r.name}`}>${(close) => html`<${RouteForm} base=${base} route=${r} models=${names}
                done=${(msg) => { close(); after(msg); }} cancel=${html`<button type="button" onClick=${close}>Cancel</button>`} />`}</${DialogButton}>
              <${ConfirmButton} label=${`Remove route ${r.name}`} text="Remove" confirmLabel="Remove route" question=${`Remove the route ${r.name}? Requests naming route/${r.name} are refused.`}
                onConfirm=${async () => { await api('DELETE', `${base}/routes/${seg(r.name)}`); after(`Route ${r.name} removed.`); }} />
            </td></tr>`} />`)}</${Loaded}>
    <${RouteForm} key=${names.join()} base=${base} route=${null} models=${names} done=${(msg) => after(msg)} />
    <${RoutingInsight} workspaceId=${workspaceId} />
  </section>`;
}
