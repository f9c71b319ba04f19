// A tool server's tools: enabled and needs-approval per tool, and listing them again (refresh).
import { useEffect, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, Paged, Empty } from '../ui.js';

/** A checkbox in a table cell, named for screen readers by the tool and the setting. */
const Toggle = ({ label, checked, onChange }) => html`<label class="cell-check">
  <input type="checkbox" checked=${checked} onChange=${(e) => onChange(e.currentTarget.checked)} />
  <span class="sr-only">${label}</span>
</label>`;

export function ServerTools({ base, server }) {
  const path = `${base}/${seg(server.id)}/tools`;
  // The listing is kept here rather than reloaded: a refresh lists the server on the replica that
  // answers it, and a change to a tool answers with that tool's settings.
  const [tools, setTools] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const list = async (refresh) => {
    setBusy(true);
    setError(null);
    try {
      setTools((await api('GET', `${path}${refresh ? '?refresh=true' : ''}`)).data);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  // An OAuth server lists its tools only to a signed-in svc: until then, the row's Sign in.
  const needsSignIn = server.auth === 'oauth' && server.sign_in !== 'signed_in';
  useEffect(() => { if (!needsSignIn) void list(false); }, [path, needsSignIn]);
  const change = async (tool, body) => {
    setError(null);
    try {
      const t = await api('PATCH', `${path}/${seg(tool.name)}`, body);
      setTools((all) => all.map((x) => (x.name === t.name ? { ...x, enabled: t.enabled, needs_approval: t.needs_approval } : x)));
    } catch (err) {
      setError(err.message);
      setTools((all) => [...all]); // renders the checkbox back to the stored setting
    }
  };
  const origin = (() => { try { return new URL(server.url).origin; } catch { return server.url; } })();
  return html`<section class="card" aria-labelledby="server-tools-h">
    <h2 id="server-tools-h">Tools of ${server.name}</h2>
    <p class="hint">A tool is offered to models while enabled. One that needs approval waits for the person's approval of each call
      (or of the tool for good). New tools need approval unless the server declares them read-only.</p>
    ${!server.origin_allowed && html`<p class="error">svc does not contact this server: its origin <code>${origin}</code> is not on the
      instance's allow-list. An instance admin allows it (Allowed origins, on this page for them); until then a call is refused.</p>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!needsSignIn && html`<button type="button" disabled=${busy} onClick=${() => list(true)}>${busy ? 'Listing…' : `Refresh tools of ${server.name}`}</button>`}
    ${needsSignIn && tools === null && !busy && html`<${Empty}>svc is not signed in to ${server.name}${server.sign_in === 'expired' ? ' any more' : ''}:
      an admin of this workspace signs in (Sign in, on its row), then its tools are listed here.</${Empty}>`}
    ${tools === null ? (busy && html`<p class="loading" role="status">Listing the server's tools…</p>`) : tools.length === 0
      ? html`<${Empty}>No tools known for this server yet. ${server.origin_allowed ? 'It lists none; add tools to it, then Refresh.' : 'They are listed once its origin is allowed.'}</${Empty}>`
      : html`<${Paged} caption=${`Tools of ${server.name}`} rows=${tools} head=${['Tool', 'Model sees it as', 'Description', 'Enabled', 'Needs approval']}
          row=${(t) => html`<tr data-tool=${t.name}>
            <td>${t.name}${t.read_only ? html` <span class="badge unchecked">read-only</span>` : ''}</td><td><code>${t.function_name}</code></td>
            <td>${t.description || '—'}</td>
            <td><${Toggle} label=${`${t.name} enabled`} checked=${t.enabled} onChange=${(on) => change(t, { enabled: on })} /></td>
            <td><${Toggle} label=${`${t.name} needs approval`} checked=${t.needs_approval} onChange=${(on) => change(t, { needs_approval: on })} /></td>
          </tr>`} />`}
  </section>`;
}
