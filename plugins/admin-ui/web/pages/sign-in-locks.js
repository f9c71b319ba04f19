// Sign-in locks (instance admins, on the People page): accounts and addresses locked after too many
// failed sign-ins or reset links, with a way to lift each at once.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Empty, Notice, when } from '../ui.js';

const what = (l) => (l.action === 'sign_in' ? 'passwords' : 'reset links');

export function SignInLocks() {
  const locks = useLoad(() => api('GET', '/sign-in-locks'));
  const [done, setDone] = useState(null);
  const [error, setError] = useState(null);
  const lift = (l) => async () => {
    setError(null);
    try {
      await api('DELETE', `/sign-in-locks/${seg(l.id)}`);
      setDone(`Lifted the lock on ${l.subject}.`);
    } catch (err) {
      setError(err.message);
    }
    locks.reload();
  };
  return html`<section aria-labelledby="locks-h">
    <h2 id="locks-h">Sign-in locks</h2>
    <p class="hint">After repeated wrong passwords an account or a client address waits longer each time, then is locked for a while; even the right password is refused until then. Lift a lock once you know who was trying.</p>
    ${done && html`<${Notice}>${done}</${Notice}>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Loaded} state=${locks}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No account or address is locked.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Sign-in locks"><table>
          <caption class="sr-only">Locked accounts and addresses</caption>
          <thead><tr>${['Locked', 'Guessing', 'Failures', 'Since', 'Until', ''].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${d.data.map((l) => html`<tr>
            <td>${l.scope === 'account' ? `account ${l.subject}` : `address ${l.subject}`}</td><td>${what(l)}</td><td>${l.failures}</td>
            <td>${when(l.locked_at)}</td><td>${when(l.locked_until)}</td>
            <td class="actions"><button type="button" onClick=${lift(l)}>Lift lock on ${l.subject}</button></td>
          </tr>`)}</tbody>
        </table></div>`)}</${Loaded}>
  </section>`;
}
