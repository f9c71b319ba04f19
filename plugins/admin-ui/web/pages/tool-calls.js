// A workspace's tool call records (never the arguments, only their size and hash), by request id.
import { useState } from 'preact/hooks';
import { api, qs, seg } from '../api.js';
import { html, useLoad, useForm, useCursors, Form, Field, Loaded, Empty, CursorPager, when } from '../ui.js';

const outcomes = { ok: 'ran', error: 'failed', denied: 'refused: origin not allowed', pending: 'waiting for approval', refused: 'refused by the person' };
// A call that stopped for approval keeps that outcome; the answer is shown beside it, with the request that gave it.
const answers = { approved: 'stopped for approval, then approved', refused: 'stopped for approval, then refused' };
const outcomeText = (c) => (c.outcome === 'pending' && c.answer ? answers[c.answer] ?? c.answer : outcomes[c.outcome] ?? c.outcome);

export function ToolCalls({ workspaceId, serversVersion }) {
  const base = `/workspaces/${seg(workspaceId)}`;
  const form = useForm({ request_id: '' });
  const [requestId, setRequestId] = useState('');
  const pages = useCursors();
  // The servers come with each page, to name the server of each call (one may be new, or removed).
  const calls = useLoad(async () => {
    const [page, servers] = await Promise.all([api('GET', `${base}/tool-calls${qs({ request_id: requestId, cursor: pages.cursor, limit: 25 })}`), api('GET', `${base}/tool-servers`)]);
    return { ...page, names: new Map(servers.data.map((s) => [s.id, s.name])) };
  }, [base, requestId, pages.cursor, serversVersion]);
  const serverName = (id) => calls.data?.names.get(id) ?? `removed server ${id}`;
  return html`<section aria-labelledby="calls-h">
    <h2 id="calls-h">Tool calls</h2>
    <${Form} form=${form} class="inline" submitLabel="Filter" onSubmit=${async (v) => {
      await api('GET', `${base}/tool-calls${qs({ request_id: v.request_id, limit: 1 })}`);
      const id = v.request_id.trim();
      // The same filter again loads again: new calls may have been recorded since.
      if (id === requestId && pages.cursors.length === 1) calls.reload();
      setRequestId(id);
      pages.reset();
    }}>
      <${Field} form=${form} name="request_id" label="Calls of request (x-svc-request-id)" />
    </${Form}>
    <${Loaded} state=${calls}>${(p) => (p.data.length === 0
      ? html`<${Empty}>No tool calls${requestId ? ' in this request' : ' yet'}. Each call a model makes to a workspace tool is recorded here with
          its outcome; the arguments never are, only their size and SHA-256.</${Empty}>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Tool calls"><table>
          <caption class="sr-only">Tool calls, ${requestId ? 'in the order they ran' : 'newest first'}</caption>
          <thead><tr>${['Time', 'Request', 'Server', 'Tool', 'Outcome', 'Took', 'Arguments'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
          <tbody>${p.data.map((c) => html`<tr data-call=${c.id}>
            <td>${when(c.created_at)}</td>
            <td><a href=${`#/requests/${seg(c.request_id)}/${seg(workspaceId)}`}><code>${c.request_id}</code></a></td>
            <td>${serverName(c.server_id)}</td><td>${c.tool}</td>
            <td>${outcomeText(c)}${c.approval_id ? html` <code>${c.approval_id}</code>` : ''}${c.answer_request_id
              ? html` in <a href=${`#/requests/${seg(c.answer_request_id)}/${seg(workspaceId)}`}><code>${c.answer_request_id}</code></a>` : ''}</td>
            <td>${c.duration_ms} ms</td>
            <td>${c.arguments_bytes} bytes, SHA-256 <code title=${c.arguments_sha256}>${c.arguments_sha256.slice(0, 12)}…</code></td>
          </tr>`)}</tbody>
        </table></div>
        <${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>
  </section>`;
}
