// Providers (instance admins): add, change address or key, check, remove; built-ins take a key and
// may be pointed at another address (a regional endpoint, an egress proxy) or back at their default.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton, DialogButton, CheckBadge, when } from '../ui.js';
import { ImportModels } from './import-models.js';


/** A built-in provider's address set by an instance admin, or '' when it uses its default. */
const setAddress = (p) => (p.built_in && p.address !== p.default_address ? p.address : '');

function Edit({ provider, done }) {
  const own = provider.built_in ? setAddress(provider) : provider.address;
  const form = useForm({ address: own, api_key: '' });
  const hint = provider.built_in
    ? `Leave empty to use the default, ${provider.default_address}. Another address (a regional endpoint, your egress proxy) is the API base without /chat/completions.`
    : 'The API base without /chat/completions, as the service reaches it.';
  return html`<${Form} form=${form} title=${`Change ${provider.name}`} submitLabel="Save and check" onSubmit=${async (v) => {
    const body = {};
    const address = v.address.trim();
    // For a built-in, an emptied field clears the address set here (null): its default applies again.
    if (address !== own) body.address = provider.built_in && address === '' ? null : address;
    if (v.api_key) body.api_key = v.api_key;
    await api('PATCH', `/providers/${seg(provider.name)}`, body);
    done();
  }}>
    <${Field} form=${form} name="address" label="Address" type="url" hint=${hint} />
    <${Field} form=${form} name="api_key" label="New API key" type="password" autocomplete="off" hint="Leave empty to keep the stored key." />
    <button type="button" onClick=${() => done()}>Cancel</button>
  </${Form}>`;
}

function Table({ caption, rows, check, edit, reload, empty }) {
  if (rows.length === 0) return html`<${Empty}>${empty}</${Empty}>`;
  return html`<${Paged} caption=${caption} rows=${rows} head=${['Name', 'Address', 'Key', 'Check', 'Checked', '']}
    row=${(p) => html`<tr data-provider=${p.name}>
      <td>${p.name}</td><td><code>${p.address}</code>${setAddress(p) && html` <span class="hint">(set here; default <code>${p.default_address}</code>)</span>`}</td><td>${p.has_key ? 'set' : 'none'}</td>
      <td><${CheckBadge} check=${p.check} /></td><td>${when(p.checked_at)}</td>
      <td class="actions">
        <button type="button" onClick=${() => check(p)}>Check ${p.name}</button>
        <button type="button" onClick=${() => edit(p)}>Change ${p.name}</button>
        ${!p.built_in && html`<${DialogButton} label=${`Import models of ${p.name}`} title=${`Import models from ${p.name}'s list`}>${(close) => html`<${ImportModels} provider=${p.name} done=${close} />`}</${DialogButton}>`}
        ${!p.built_in && html`<${ConfirmButton} label=${`Remove ${p.name}`} confirmLabel="Remove provider"
          question=${`Remove the provider ${p.name}? Requests to its models are refused until a provider of that name is added again; its models stay listed.`}
          onConfirm=${async () => { await api('DELETE', `/providers/${seg(p.name)}?confirm=${seg(p.name)}`); reload(); }} />`}
      </td>
    </tr>`} />`;
}

export function Providers() {
  const list = useLoad(() => api('GET', '/providers'));
  const form = useForm({ name: '', address: '', api_key: '' });
  const [editing, setEditing] = useState(null);
  const [error, setError] = useState(null);
  const check = async (p) => {
    setError(null);
    await api('POST', `/providers/${seg(p.name)}/check`).catch((err) => setError(err.message));
    list.reload();
  };
  return html`<h1 tabindex="-1">Providers</h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Loaded} state=${list}>${(d) => html`
      <${Table} caption="Added providers" rows=${d.data.filter((p) => !p.built_in)} check=${check} edit=${setEditing} reload=${list.reload}
        empty="No providers added yet. Add any Chat-Completions-compatible server below (a local vLLM, llama.cpp or Ollama), then add its models on the Models page." />
      <h2>Built-in providers</h2>
      <p class="hint">They need only a key (Change), and may be pointed at another address, such as a regional endpoint or your egress proxy; their priced models are listed on the Models page.</p>
      <${Table} caption="Built-in providers" rows=${d.data.filter((p) => p.built_in)} check=${check} edit=${setEditing} reload=${list.reload} empty="No built-in providers in this service." />`}</${Loaded}>
    ${editing && html`<${Edit} key=${editing.name} provider=${editing} done=${() => { setEditing(null); list.reload(); }} />`}
    <${Form} form=${form} title="Add a provider" submitLabel="Add and check" onSubmit=${async (v) => {
      const body = { name: v.name, address: v.address };
      if (v.api_key) body.api_key = v.api_key;
      await api('POST', '/providers', body);
      form.reset();
      list.reload();
    }}>
      <${Field} form=${form} name="name" label="Name" hint="Lowercase letters, numbers and dashes; the first part of its model names. Cannot change later." required pattern="[a-z0-9-]+" />
      <${Field} form=${form} name="address" label="Address" type="url" hint="The API base without /chat/completions, e.g. http://10.0.0.5:8000/v1" required />
      <${Field} form=${form} name="api_key" label="API key (optional)" type="password" autocomplete="off" hint="Stored encrypted and never shown again. Leave empty for a server that takes none." />
    </${Form}>`;
}
