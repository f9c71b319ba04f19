// Single sign-on (instance admins): OpenID Connect identity providers, and whether password
// sign-in stays on. Client secrets are sent once and never shown.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Empty, Notice, ConfirmButton } from '../ui.js';

const lines = (text) => text.split(/[\s,]+/).map((s) => s.trim().toLowerCase()).filter(Boolean);

function AddIssuer({ reload }) {
  const form = useForm({ name: '', discovery_url: '', client_id: '', client_secret: '', allowed_domains: '', admin_claim: '', admin_value: '', create_persons: false });
  return html`<${Form} form=${form} title="Add an identity provider" submitLabel="Add identity provider" onSubmit=${async (v) => {
    const body = { name: v.name, discovery_url: v.discovery_url, client_id: v.client_id, allowed_domains: lines(v.allowed_domains), create_persons: v.create_persons };
    if (v.client_secret) body.client_secret = v.client_secret;
    if (v.admin_claim) body.admin_claim = v.admin_claim;
    if (v.admin_value) body.admin_value = v.admin_value;
    await api('POST', '/oidc/issuers', body);
    form.reset();
    reload();
  }}>
    <${Field} form=${form} name="name" label="Name" hint="Shown on the sign-in page as “Sign in with …”." required />
    <${Field} form=${form} name="discovery_url" label="Issuer or discovery URL" type="url" hint="https://login.example.com (its /.well-known/openid-configuration is read at once)." required />
    <${Field} form=${form} name="client_id" label="Client id" required />
    <${Field} form=${form} name="client_secret" label="Client secret" type="password" autocomplete="off" hint="Stored encrypted; never shown again." />
    <${Field} form=${form} name="allowed_domains" label="Allowed e-mail domains" hint="Separated by spaces or commas; empty allows any." />
    <${Field} form=${form} name="admin_claim" label="Instance-admin claim" hint="e.g. groups; leave empty to manage instance admins here only." />
    <${Field} form=${form} name="admin_value" label="Instance-admin value" hint="The value the claim must hold (or contain), e.g. svc-admins; default true." />
    <${Field} form=${form} name="create_persons" label="Create unknown persons at their first sign-in" type="checkbox" />
  </${Form}>`;
}

function PasswordSetting({ options, reload }) {
  const [error, setError] = useState(null);
  const flip = async () => {
    setError(null);
    try {
      await api('PUT', '/sign-in-settings', { password_sign_in: !options.password });
    } catch (err) {
      setError(err.message);
    }
    reload();
  };
  return html`<section aria-labelledby="pw-h">
    <h2 id="pw-h">Password sign-in</h2>
    <p>Password sign-in is <strong>${options.password ? 'on' : 'off'}</strong>.${options.password ? '' : ' Persons sign in only through an identity provider; the svc admin create-admin command still works.'}</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <button type="button" onClick=${flip}>${options.password ? 'Turn password sign-in off' : 'Turn password sign-in on'}</button>
  </section>`;
}

export function SingleSignOn() {
  const issuers = useLoad(() => api('GET', '/oidc/issuers'));
  const options = useLoad(() => api('GET', '/sign-in-options'));
  const [error, setError] = useState(null);
  const reload = () => { issuers.reload(); options.reload(); };
  const act = (fn) => async () => {
    setError(null);
    try { await fn(); } catch (err) { setError(err.message); }
    reload();
  };
  return html`<h1 tabindex="-1">Single sign-on</h1>
    <p class="hint">Persons sign in with an OpenID Connect identity provider (authorization code flow with PKCE). Register the redirect URI shown below at the provider.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Loaded} state=${issuers}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No identity provider yet: add one below.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Identity providers"><table>
          <caption class="sr-only">Identity providers</caption>
          <thead><tr>${['Name', 'Issuer', 'Client id', 'Domains', 'Instance admins', 'New persons', 'State', 'Redirect URI', ''].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${d.data.map((i) => html`<tr>
            <td>${i.name}</td><td><code>${i.discovery_url}</code></td><td><code>${i.client_id}</code>${i.has_client_secret ? ' (secret set)' : ''}</td>
            <td>${i.allowed_domains.join(', ') || 'any'}</td><td>${i.admin_claim ? `${i.admin_claim} = ${i.admin_value ?? 'true'}` : 'managed here'}</td>
            <td>${i.create_persons ? 'created' : 'must exist'}</td><td>${i.enabled ? 'on' : 'off'}</td><td><code>${i.redirect_uri}</code></td>
            <td class="actions">
              <button type="button" onClick=${act(() => api('PATCH', `/oidc/issuers/${seg(i.id)}`, { enabled: !i.enabled }))}>${i.enabled ? `Turn ${i.name} off` : `Turn ${i.name} on`}</button>
              <button type="button" onClick=${act(() => api('PATCH', `/oidc/issuers/${seg(i.id)}`, { create_persons: !i.create_persons }))}>${i.create_persons ? `Stop creating persons from ${i.name}` : `Create persons from ${i.name}`}</button>
              <${ConfirmButton} label=${`Remove ${i.name}`} question=${`Remove ${i.name}? Persons who signed in with it stay and may sign in another way.`} onConfirm=${async () => { await api('DELETE', `/oidc/issuers/${seg(i.id)}`); reload(); }} />
            </td>
          </tr>`)}</tbody>
        </table></div>`)}</${Loaded}>
    <${AddIssuer} reload=${reload} />
    <${Loaded} state=${options}>${(o) => html`<${PasswordSetting} options=${o} reload=${reload} />`}</${Loaded}>
    ${options.data && !options.data.password && html`<${Notice}>Only identity providers sign persons in now.</${Notice}>`}`;
}
