// Sign in, and setting a new password from a reset link (#/reset/<token>).
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useForm, useLoad, Form, Field, Notice } from '../ui.js';

/** Single sign-on buttons are plain links: the browser goes to the identity provider and back. */
const IssuerLinks = ({ issuers }) => issuers.length > 0 && html`<ul class="sso" aria-label="Single sign-on">
  ${issuers.map((i) => html`<li><a class="button primary" href=${i.start_url}>Sign in with ${i.name}</a></li>`)}
</ul>`;

export function SignIn({ onSignedIn }) {
  const form = useForm({ email: '', password: '' });
  // Without the options (an older server, a failure) the password form is shown, as before.
  const options = useLoad(() => api('GET', '/sign-in-options').catch(() => ({ password: true, issuers: [] })));
  const o = options.data ?? { password: true, issuers: [] };
  return html`<div class="narrow">
    <h1 tabindex="-1">Sign in to svc</h1>
    <${IssuerLinks} issuers=${o.issuers} />
    ${o.password && html`<${Form} form=${form} submitLabel="Sign in" onSubmit=${async (v) => {
      await api('POST', '/sessions', v);
      onSignedIn();
    }}>
      <${Field} form=${form} name="email" label="Email" type="email" autocomplete="username" required />
      <${Field} form=${form} name="password" label="Password" type="password" autocomplete="current-password" required />
    </${Form}>
    <p class="hint">Forgot your password? Ask an instance admin for a reset link (People page); it opens a page here to set a new one.</p>`}
    <section class="card" aria-labelledby="first-h">
      <h2 id="first-h">First time here?</h2>
      <p>The first instance admin is created on the server, never from this page, so nobody who reaches the port first can take it over. In the svc folder, run:</p>
      <pre class="cmd"><code>printf 'a long admin password' > /tmp/pw
bash scripts/svc.sh admin create-admin --email you@example.com --password-file /tmp/pw</code></pre>
      <p class="hint">Or start svc once with <code>SVC_ADMIN_EMAIL</code> and <code>SVC_ADMIN_PASSWORD</code> set. Then sign in here; that admin adds everyone else on the People page.</p>
    </section>
  </div>`;
}

export function ResetPassword({ token }) {
  const form = useForm({ token, password: '' });
  const [done, setDone] = useState(false);
  return html`<div class="narrow">
    <h1 tabindex="-1">Set a new password</h1>
    ${done
      ? html`<${Notice}>Your password is set and every earlier sign-in has ended. <a href="#/">Sign in</a> with the new password.</${Notice}>`
      : html`<${Form} form=${form} submitLabel="Set password" onSubmit=${async (v) => {
          await api('POST', '/password-reset', v);
          setDone(true);
        }}>
          <${Field} form=${form} name="token" label="Reset link token" hint="Filled in from the link you were given." required />
          <${Field} form=${form} name="password" label="New password" type="password" autocomplete="new-password" required />
        </${Form}>`}
  </div>`;
}
