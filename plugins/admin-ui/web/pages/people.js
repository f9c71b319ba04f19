// Persons of the instance (instance admins): add, suspend or reinstate, and password-reset links.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Notice, when } from '../ui.js';
import { SignInLocks } from './sign-in-locks.js';

export function People() {
  const persons = useLoad(() => api('GET', '/persons'));
  const form = useForm({ email: '', name: '', password: '', instance_admin: false });
  const [link, setLink] = useState(null);
  const [error, setError] = useState(null);
  const act = (fn) => async () => {
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err.message);
    }
    persons.reload();
  };
  return html`<h1 tabindex="-1">People</h1>
    <p class="hint">Persons sign in with email and password; add them to workspaces on each workspace's page.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${link && html`<${Notice}>Reset link for ${link.email} (valid until ${when(link.expires_at)}, shown once): <code class="secret">${link.url}</code></${Notice}>`}
    <${Loaded} state=${persons}>${(d) => html`<${Paged} caption="People" rows=${d.data} head=${['Email', 'Name', 'Instance admin', 'State', 'Password set', '']}
      row=${(p) => html`<tr>
        <td>${p.email}</td><td>${p.name ?? '—'}</td><td>${p.instance_admin ? 'yes' : 'no'}</td><td>${p.status}</td><td>${p.password_set ? 'yes' : 'no'}</td>
        <td class="actions">
          <button type="button" onClick=${act(() => api('PATCH', `/persons/${seg(p.id)}`, { status: p.status === 'active' ? 'suspended' : 'active' }))}>
            ${p.status === 'active' ? `Suspend ${p.email}` : `Reinstate ${p.email}`}</button>
          <button type="button" onClick=${act(async () => {
            const r = await api('POST', `/persons/${seg(p.id)}/password-reset`);
            setLink({ email: p.email, expires_at: r.expires_at, url: `${location.origin}/#/reset/${encodeURIComponent(r.token)}` });
          })}>Reset link for ${p.email}</button>
        </td>
      </tr>`} />`}</${Loaded}>
    <${Form} form=${form} title="Add a person" submitLabel="Add person" onSubmit=${async (v) => {
      const body = { email: v.email, instance_admin: v.instance_admin };
      if (v.name) body.name = v.name;
      if (v.password) body.password = v.password;
      await api('POST', '/persons', body);
      form.reset();
      persons.reload();
    }}>
      <${Field} form=${form} name="email" label="Email" type="email" required />
      <${Field} form=${form} name="name" label="Name (optional)" />
      <${Field} form=${form} name="password" label="Password (optional)" type="password" autocomplete="new-password" hint="Leave empty and send the person a reset link instead." />
      <${Field} form=${form} name="instance_admin" label="Instance admin" type="checkbox" />
    </${Form}>
    <${SignInLocks} />`;
}
