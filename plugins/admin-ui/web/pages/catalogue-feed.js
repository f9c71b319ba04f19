// Catalogue feed (instance admins): signed price-list updates on or off, the URL in force, the
// last check and the list applied; Check now.
import { api } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Notice, when } from '../ui.js';
import { useState } from 'preact/hooks';

const outcomes = { applied: 'Applied a new list', unchanged: 'No newer list', failed: 'Failed' };
const sources = { config: 'the service configuration', admin: 'this page', null: 'nowhere (off)' };

function Status({ s }) {
  return html`<dl class="facts">
    <dt>State</dt><dd>${s.on ? html`<span class="badge connected">On</span>` : html`<span class="badge unchecked">Off</span>`}</dd>
    <dt>Feed URL</dt><dd>${s.url ? html`<code>${s.url}</code>` : '—'} <span class="hint">(set by ${sources[s.source] ?? s.source})</span></dd>
    <dt>Public keys pinned</dt><dd>${s.public_keys}${s.public_keys === 0 ? ' — lists cannot be verified, so the feed cannot be turned on' : ''}</dd>
    <dt>Checked every</dt><dd>${Math.round(s.interval_ms / 60000)} minutes</dd>
    <dt>Last check</dt><dd>${s.last_check ? html`${when(s.last_check.at)}: ${outcomes[s.last_check.outcome] ?? s.last_check.outcome}${s.last_check.error_code ? html` (<code>${s.last_check.error_code}</code>)` : ''}` : 'never'}</dd>
    <dt>List in use</dt><dd>${s.applied ? `number ${s.applied.sequence}, issued ${when(s.applied.issued_at)}, applied ${when(s.applied.applied_at)}` : 'the built-in prices shipped with svc'}</dd>
  </dl>`;
}

export function CatalogueFeed() {
  const status = useLoad(() => api('GET', '/catalogue-feed'));
  const [checked, setChecked] = useState(null);
  const [error, setError] = useState(null);
  const form = useForm({ url: '' }, (v) => ({ url: v.url.trim() && !/^https:\/\/\S+$/.test(v.url.trim()) ? 'Enter an https:// address, e.g. https://prices.example.com/catalogue.json' : null }));
  const check = async () => {
    setError(null);
    setChecked(null);
    try {
      const s = await api('POST', '/catalogue-feed/check');
      setChecked(`Checked: ${outcomes[s.last_check?.outcome] ?? 'done'}.`);
    } catch (err) {
      setError(err.message);
    }
    status.reload();
  };
  return html`<h1 tabindex="-1">Catalogue feed</h1>
    <p class="hint">svc knows the prices of built-in models from a signed list. With the feed on, it fetches newer lists from the URL and applies them only when their signature matches a pinned public key.</p>
    <${Loaded} state=${status}>${(s) => html`<section class="card" aria-labelledby="feed-h"><h2 id="feed-h">Status</h2><${Status} s=${s} />
      ${s.on && html`<button type="button" onClick=${check}>Check now</button>`}
      ${checked && html`<${Notice}>${checked}</${Notice}>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}</section>`}</${Loaded}>
    <${Form} form=${form} title="Feed URL" submitLabel="Save" onSubmit=${async (v) => {
      const s = await api('PUT', '/catalogue-feed', { url: v.url.trim() });
      status.reload();
      return s.on ? 'Saved: the feed is on and was checked once.' : 'Saved: the feed is off.';
    }}>
      <${Field} form=${form} name="url" label="List URL" type="url" hint="Empty turns the feed off." />
    </${Form}>
    <button type="button" onClick=${async () => { await api('PUT', '/catalogue-feed', { url: null }); status.reload(); }}>Use the service configuration</button>`;
}
