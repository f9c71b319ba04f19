// A workspace's own keys for built-in providers (used instead of the instance-wide key).
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Field, Loaded, Paged, Empty, ConfirmButton, CheckBadge } from '../ui.js';

function KeyForm({ base, row, reload }) {
  const form = useForm({ api_key: '' });
  return html`<form class="inline" onSubmit=${form.submit(async (v) => {
    await api('PUT', `${base}/${seg(row.provider)}`, v);
    form.reset();
    reload();
  })}>
    <${Field} form=${form} name="api_key" label=${`Workspace key for ${row.provider}`} type="password" autocomplete="off" />
    <button type="submit" disabled=${form.busy}>Save and check</button>
    ${form.formError && html`<p class="error" role="alert">${form.formError}</p>`}
  </form>`;
}

export function ProviderKeys({ workspaceId }) {
  const base = `/workspaces/${seg(workspaceId)}/provider-keys`;
  const keys = useLoad(() => api('GET', base), [workspaceId]);
  return html`<section aria-labelledby="pkeys-h">
    <h2 id="pkeys-h">Built-in provider keys</h2>
    <p class="hint">A workspace's own key wins over the instance-wide key for this workspace only. Stored encrypted, never shown again.</p>
    <${Loaded} state=${keys}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No built-in providers in this service.</${Empty}>`
      : html`<${Paged} caption="Built-in provider keys" rows=${d.data} head=${['Provider', 'Key in use', 'Check', '']}
          row=${(k) => html`<tr>
            <td>${k.provider}</td>
            <td>${k.has_workspace_key ? 'this workspace’s' : k.has_instance_key ? 'instance-wide' : 'none'}</td>
            <td>${k.has_workspace_key ? html`<${CheckBadge} check=${k.check} />` : '—'}</td>
            <td><${KeyForm} base=${base} row=${k} reload=${keys.reload} />
              ${k.has_workspace_key && html`<${ConfirmButton} label=${`Remove workspace key for ${k.provider}`} confirmLabel="Remove key"
                question=${`Remove this workspace's key for ${k.provider}? The instance-wide key applies again, if set.`}
                onConfirm=${async () => { await api('DELETE', `${base}/${seg(k.provider)}`); keys.reload(); }} />`}</td>
          </tr>`} />`)}</${Loaded}>
  </section>`;
}
