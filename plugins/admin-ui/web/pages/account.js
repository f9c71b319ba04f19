// The signed-in person's own password.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useForm, Form, Field, Notice } from '../ui.js';

export function Account({ me }) {
  const form = useForm({ current_password: '', new_password: '' });
  const [done, setDone] = useState(false);
  return html`<h1 tabindex="-1">Account</h1>
    <p>Signed in as ${me.person.email}${me.person.instance_admin ? ' (instance admin)' : ''}.</p>
    ${done && html`<${Notice}>Password changed; your other sign-ins have ended.</${Notice}>`}
    <${Form} form=${form} title="Change password" submitLabel="Change password" onSubmit=${async (v) => {
      await api('POST', '/me/password', v);
      form.reset();
      setDone(true);
    }}>
      <${Field} form=${form} name="current_password" label="Current password" type="password" autocomplete="current-password" />
      <${Field} form=${form} name="new_password" label="New password" type="password" autocomplete="new-password" />
    </${Form}>`;
}
