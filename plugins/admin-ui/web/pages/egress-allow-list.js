// The instance's egress allow-list (instance admins): the only hosts and ports command-line tool
// servers may reach from the sandbox, through the egress proxy (plugins/sandbox).
import { api, qs } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton } from '../ui.js';

/** Whether the egress proxy holds the stored list, as this replica last handed it over. */
const pushStates = {
  ok: 'The egress proxy holds this list.',
  pending: 'svc is handing this list to the egress proxy.',
  failed: 'svc could not hand this list to the egress proxy; it tries again every minute.',
  not_configured: 'No egress proxy is set up for svc (SVC_EGRESS_URL and SVC_EGRESS_SECRET): the proxy keeps the list it was started with (SVC_EGRESS_ALLOW).',
};

export function EgressAllowList() {
  const list = useLoad(() => api('GET', '/egress-allow-list'));
  const form = useForm({ host: '', port: '443', allow_private: false });
  return html`<section aria-labelledby="egress-h">
    <h2 id="egress-h">Egress allow-list (whole instance)</h2>
    <p class="hint">Command-line tool servers run in the sandbox and can reach only these hosts and ports (through the egress proxy);
      every other connection is refused. Remote tool servers are governed by the allowed origins instead. A server started with
      npx needs <code>registry.npmjs.org</code> port 443 to download its package.</p>
    <${Loaded} state=${list}>${(d) => html`
      <p class=${d.push === 'failed' ? 'error' : 'hint'} role="status">${pushStates[d.push] ?? d.push}</p>
      ${d.data.length === 0
        ? html`<${Empty}>No hosts allowed: command-line tool servers reach nothing outside the sandbox. Add each host and port a server needs.</${Empty}>`
        : html`<${Paged} caption="Egress allow-list" rows=${d.data} head=${['Host', 'Port', 'Private addresses', '']}
            row=${(e) => html`<tr data-egress=${`${e.host}:${e.port}`}><td><code>${e.host}</code></td><td>${e.port}</td>
              <td>${e.allow_private ? 'allowed' : 'refused'}</td>
              <td><${ConfirmButton} label=${`Stop allowing ${e.host}:${e.port}`} confirmLabel="Stop allowing"
                question=${`Stop allowing ${e.host}:${e.port}? Command-line tool servers can no longer reach it.`}
                onConfirm=${async () => { await api('DELETE', `/egress-allow-list${qs({ host: e.host, port: e.port })}`); list.reload(); }} /></td></tr>`} />`}`}</${Loaded}>
    <${Form} form=${form} class="inline" submitLabel="Allow host" onSubmit=${async (v) => {
      const port = v.port.trim() === '' ? undefined : Number(v.port);
      await api('POST', '/egress-allow-list', { host: v.host, port, allow_private: v.allow_private });
      form.reset();
      list.reload();
    }}>
      <${Field} form=${form} name="host" label="Host to allow" hint="A host name or IP address, e.g. api.example.com (no scheme, no wildcard)" required />
      <${Field} form=${form} name="port" label="Port" type="number" min="1" max="65535" required />
      <${Field} form=${form} name="allow_private" label="May reach private addresses" type="checkbox"
        hint="Private, loopback and link-local addresses are refused otherwise, also when the name resolves to one." />
    </${Form}>
  </section>`;
}
