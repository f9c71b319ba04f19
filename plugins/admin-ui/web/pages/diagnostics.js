// Diagnostics (instance admins): download the bundle an operator attaches to a support request.
import { useState } from 'preact/hooks';
import { download } from '../api.js';
import { html, Notice } from '../ui.js';

const contents = [
  ['versions.json', 'the versions of svc, Node.js and the dependencies, and the platform'],
  ['health.json', 'the health checks, as /healthz answers them'],
  ['sandbox.json', 'the sandbox and egress services'],
  ['settings.json', 'the configuration, each address or secret only as set or not set'],
  ['recovery-keys.json', 'which recovery key versions are given and in use, never a key'],
  ['price-updates.json', 'the price list feed'],
  ['database.json, cache.json', 'database and Redis versions and sizes'],
  ['counts.json', 'records per kind and state'],
  ['jobs.json', 'background jobs, their schedules and last runs'],
  ['plugins.json', 'the plugins in their resolved order'],
  ['failed-requests.json', 'failed requests of the last 24 hours, by status and error code'],
  ['manifest.json', 'the files, and which parts could not be read'],
];

/** Hands the bytes to the browser as a file download. */
function save(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function Diagnostics() {
  const [state, setState] = useState({ busy: false, error: null, done: null });
  const get = async () => {
    setState({ busy: true, error: null, done: null });
    try {
      const { blob, name } = await download('/diagnostics', 'svc-diagnostics.tar.gz');
      save(blob, name);
      setState({ busy: false, error: null, done: { name, kb: Math.max(1, Math.round(blob.size / 1024)) } });
    } catch (err) {
      setState({ busy: false, error: err.message, done: null });
    }
  };
  return html`<h1 tabindex="-1">Diagnostics</h1>
    <p>The diagnostics bundle is a gzip tar to attach to a support request. It holds:</p>
    <ul class="files">${contents.map(([file, what]) => html`<li><code>${file}</code>: ${what}</li>`)}</ul>
    <p><strong>It never holds</strong> credentials, prompts, replies, tool arguments, names, e-mail addresses, or provider and
      tool-server addresses. A part that cannot be read (the database is down, say) names only an error code.
      The command <code>svc diagnostics</code> writes the same bundle, also when the service cannot start.</p>
    <button type="button" class="primary" disabled=${state.busy} onClick=${get}>${state.busy ? 'Preparing the bundle…' : 'Download diagnostics bundle'}</button>
    ${state.done && html`<${Notice}>Downloaded <code>${state.done.name}</code> (${state.done.kb} KB).</${Notice}>`}
    ${state.error && html`<p class="error" role="alert">${state.error}</p>`}`;
}
