// A workspace's API keys: create (the key is shown once, with a copy button) and revoke.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { useNames } from '../names.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton, Notice, when } from '../ui.js';

function Created({ created }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(created.key);
    setCopied(true);
  };
  return html`<div class="card created" role="region" aria-label="New API key">
    <p><strong>Copy the key now: it is shown only this once.</strong></p>
    <p><code class="secret" data-testid="new-key">${created.key}</code></p>
    <button type="button" onClick=${copy}>Copy key</button>
    ${copied && html`<${Notice}>Copied to the clipboard.</${Notice}>`}
  </div>`;
}

export function Keys({ workspaceId, title = 'API keys', me = null }) {
  const name = useNames(me, workspaceId);
  const keys = useLoad(() => api('GET', `/workspaces/${seg(workspaceId)}/keys`), [workspaceId]);
  const form = useForm({ name: '' }, (v) => ({ name: v.name.trim() === '' ? 'Give the key a name that says where it is used, e.g. notebook.' : null }));
  const [created, setCreated] = useState(null);
  return html`<section aria-labelledby="keys-h">
    <h2 id="keys-h">${title}</h2>
    ${created && html`<${Created} created=${created} />`}
    <${Loaded} state=${keys}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No API keys yet. Create one below and send it as <code>Authorization: Bearer …</code> to <code>/v1/chat/completions</code>.</${Empty}>`
      : html`<${Paged} caption=${title} rows=${d.data} search=${(k) => `${k.name} ${k.prefix}`} head=${[...(me ? ['Owner'] : []), 'Name', 'Starts with', 'Created', 'Last used', 'State', '']}
          row=${(k) => html`<tr>
            ${me && html`<td>${name(k.person_id)}</td>`}<td>${k.name}</td><td><code>${k.prefix}…</code></td><td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td>
            <td>${k.revoked_at ? `Revoked ${when(k.revoked_at)}` : 'Active'}</td>
            <td>${!k.revoked_at && html`<${ConfirmButton} label=${`Revoke ${k.name}`} confirmLabel="Revoke"
              question=${`Revoke the key “${k.name}”? Requests with it are refused at once; this cannot be undone.`}
              onConfirm=${async () => { await api('DELETE', `/workspaces/${seg(workspaceId)}/keys/${seg(k.id)}`); keys.reload(); }} />`}</td>
          </tr>`} />`)}</${Loaded}>
    <${Form} form=${form} title="Create an API key" submitLabel="Create key" onSubmit=${async (v) => {
      setCreated(await api('POST', `/workspaces/${seg(workspaceId)}/keys`, { name: v.name.trim() }));
      form.reset();
      keys.reload();
      return `Key ${v.name.trim()} created.`;
    }}>
      <${Field} form=${form} name="name" label="Key name" hint="Where it is used, e.g. notebook; unique among your active keys here." />
    </${Form}>
  </section>`;
}
