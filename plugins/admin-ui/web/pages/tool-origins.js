// The instance's tool-server origin allow-list (instance admins): svc contacts only these.
import { api, qs } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton } from '../ui.js';

export function ToolOrigins({ changed }) {
  const origins = useLoad(() => api('GET', '/tool-origins'));
  const form = useForm({ origin: '' });
  const after = () => { origins.reload(); changed(); };
  return html`<section aria-labelledby="origins-h">
    <h2 id="origins-h">Allowed origins (whole instance)</h2>
    <p class="hint">svc contacts a tool server of any workspace only when its origin (scheme, host and port) is listed here, and
      follows no redirect from it. A server whose origin is removed keeps its tools listed, but their calls are refused.</p>
    <${Loaded} state=${origins}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No origins allowed yet: svc contacts no tool server. Allow the origin of each server a workspace registers.</${Empty}>`
      : html`<${Paged} caption="Allowed origins" rows=${d.data} head=${['Origin', '']}
          row=${(o) => html`<tr><td><code>${o}</code></td><td><${ConfirmButton} label=${`Stop allowing ${o}`} confirmLabel="Stop allowing"
            question=${`Stop allowing ${o}? Tool servers there are no longer contacted; calls to their tools are refused.`}
            onConfirm=${async () => { await api('DELETE', `/tool-origins${qs({ origin: o })}`); after(); }} /></td></tr>`} />`)}</${Loaded}>
    <${Form} form=${form} class="inline" submitLabel="Allow origin" onSubmit=${async (v) => {
      await api('POST', '/tool-origins', v);
      form.reset();
      after();
    }}>
      <${Field} form=${form} name="origin" label="Origin to allow" hint="e.g. https://tools.example.com or http://10.0.0.7:8080" required />
    </${Form}>
  </section>`;
}
