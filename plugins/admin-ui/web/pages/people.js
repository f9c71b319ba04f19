// Persons of the instance (instance admins): add, edit (name, instance admin), suspend or
// reinstate, remove, and password-reset links. Nobody can suspend, demote or remove themselves.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Notice, ConfirmButton, DialogButton, when } from '../ui.js';
import { SignInLocks } from './sign-in-locks.js';

const emailOk = (s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.trim());

function EditPerson({ person, self, done, cancel }) {
  const form = useForm({ name: person.name ?? '', instance_admin: person.instance_admin }, (v) => ({ name: v.name.length > 200 ? 'Use at most 200 characters.' : null }));
  return html`<${Form} form=${form} submitLabel="Save" cancel=${cancel} onSubmit=${async (v) => {
    const body = { name: v.name.trim() === '' ? null : v.name };
    if (!self) body.instance_admin = v.instance_admin;
    await api('PATCH', `/persons/${seg(person.id)}`, body);
    done(`${person.email} saved.`);
  }}>
    <${Field} form=${form} name="name" label="Name" hint="Empty clears it." />
    ${self ? html`<p class="hint">You are an instance admin; another instance admin can change that, not you.</p>`
      : html`<${Field} form=${form} name="instance_admin" label="Instance admin (manages providers, models, people and every workspace)" type="checkbox" />`}
  </${Form}>`;
}

function AddPerson({ done }) {
  const form = useForm({ email: '', name: '', password: '', instance_admin: false }, (v) => ({
    email: emailOk(v.email) ? null : 'Enter an email address, e.g. ada@example.com.',
    password: v.password && v.password.length < 8 ? 'Use at least 8 characters (the service may ask for more), or leave it empty and send a reset link.' : null,
  }));
  return html`<${Form} form=${form} title="Add a person" submitLabel="Add person" onSubmit=${async (v) => {
    const body = { email: v.email.trim(), instance_admin: v.instance_admin };
    if (v.name) body.name = v.name;
    if (v.password) body.password = v.password;
    await api('POST', '/persons', body);
    form.reset();
    done();
    return `${body.email} added. ${v.password ? 'They can sign in with that password.' : 'Make them a reset link (in their row) to set a password.'} Add them to workspaces on each workspace's page.`;
  }}>
    <${Field} form=${form} name="email" label="Email" type="email" />
    <${Field} form=${form} name="name" label="Name (optional)" />
    <${Field} form=${form} name="password" label="Password (optional)" type="password" autocomplete="new-password" hint="Leave empty and send the person a reset link instead." />
    <${Field} form=${form} name="instance_admin" label="Instance admin" type="checkbox" />
  </${Form}>`;
}

export function People({ me }) {
  const persons = useLoad(() => api('GET', '/persons'));
  const [link, setLink] = useState(null);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const act = (fn) => async () => {
    setError(null);
    setSaved(null);
    try {
      setSaved(await fn());
    } catch (err) {
      setError(err.message);
    }
    persons.reload();
  };
  return html`<h1 tabindex="-1">People</h1>
    <p class="hint">Persons sign in with email and password; add them to workspaces on each workspace's page.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${saved && html`<${Notice}>${saved}</${Notice}>`}
    ${link && html`<${Notice}>Reset link for ${link.email} (valid until ${when(link.expires_at)}, shown once): <code class="secret">${link.url}</code></${Notice}>`}
    <${Loaded} state=${persons}>${(d) => html`<${Paged} caption="People" rows=${d.data} search=${(p) => `${p.email} ${p.name ?? ''}`} head=${['Email', 'Name', 'Instance admin', 'State', 'Password set', '']}
      row=${(p) => {
        const self = p.id === me.person.id;
        return html`<tr data-person=${p.email}>
        <td>${p.email}${self ? ' (you)' : ''}</td><td>${p.name ?? '—'}</td><td>${p.instance_admin ? 'yes' : 'no'}</td><td>${p.status}</td><td>${p.password_set ? 'yes' : 'no'}</td>
        <td class="actions-row">
          <${DialogButton} label=${`Edit ${p.email}`} text="Edit" title=${`Edit ${p.email}`}>${(close) => html`<${EditPerson} person=${p} self=${self}
            done=${async (msg) => { close(); await persons.reload(); setSaved(msg); }} cancel=${html`<button type="button" onClick=${close}>Cancel</button>`} />`}</${DialogButton}>
          ${!self && html`<button type="button" aria-label=${`${p.status === 'active' ? 'Suspend' : 'Reinstate'} ${p.email}`}
            onClick=${act(async () => { await api('PATCH', `/persons/${seg(p.id)}`, { status: p.status === 'active' ? 'suspended' : 'active' }); return `${p.email} ${p.status === 'active' ? 'suspended: their sessions and keys stop at once' : 'reinstated'}.`; })}>
            ${p.status === 'active' ? 'Suspend' : 'Reinstate'}</button>`}
          <button type="button" aria-label=${`Reset link for ${p.email}`} onClick=${act(async () => {
            const r = await api('POST', `/persons/${seg(p.id)}/password-reset`);
            setLink({ email: p.email, expires_at: r.expires_at, url: `${location.origin}/#/reset/${encodeURIComponent(r.token)}` });
            return null;
          })}>Reset link</button>
          ${!self && html`<${ConfirmButton} label=${`Remove ${p.email}`} text="Remove" confirmLabel="Remove person"
            question=${`Remove ${p.email} for good? Their memberships, API keys and sessions end at once. Their past requests stay in the records.`}
            onConfirm=${async () => { await api('DELETE', `/persons/${seg(p.id)}`); await persons.reload(); setSaved(`${p.email} removed.`); }} />`}
        </td>
      </tr>`;
      }} />`}</${Loaded}>
    <${AddPerson} done=${() => persons.reload()} />
    <${SignInLocks} />`;
}
