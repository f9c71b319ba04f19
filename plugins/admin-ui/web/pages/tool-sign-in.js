// An OAuth tool server's sign-in on its row: the state, Sign in (to the authorization server and
// back to svc's own page) and Sign out (asks first). svc holds the tokens; the page never sees them.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, ConfirmButton } from '../ui.js';

const states = {
  signed_in: ['connected', 'signed in'],
  not_signed_in: ['unchecked', 'not signed in'],
  expired: ['could_not_connect', 'sign-in expired'],
};

export function SignIn({ base, server, changed }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const path = `${base}/${seg(server.id)}/sign-in`;
  const [cls, label] = states[server.sign_in] ?? ['unchecked', server.sign_in];
  // The authorization server returns the browser to svc's callback, which ends on its own page
  // ("Signed in", with a link back here); this tab goes there rather than a pop-up a blocker may stop.
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const { authorization_url: url } = await api('POST', path);
      window.location.assign(url);
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  return html`<span class=${`badge ${cls}`}>${label}</span>
    <div class="sign-in">
      <button type="button" disabled=${busy} onClick=${start}>${busy ? 'Signing in…' : `Sign in to ${server.name}`}</button>
      ${server.sign_in !== 'not_signed_in' && html`<${ConfirmButton} label=${`Sign out of ${server.name}`} confirmLabel="Sign out"
        question=${`Sign out of ${server.name}? svc forgets its tokens there; the server's tools cannot be called until an admin of this workspace signs in again.`}
        onConfirm=${async () => { await api('DELETE', path); changed(); }} />`}
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}`;
}
