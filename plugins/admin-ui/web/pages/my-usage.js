// My usage (every signed-in person): in one workspace, their own spend, the room left under each
// cap their requests count against, their recent requests (with traces) and their own API keys.
import { useState } from 'preact/hooks';
import { api, seg, qs } from '../api.js';
import { html, useLoad, useCursors, Loaded, Empty, Paged, CursorPager, money, when } from '../ui.js';
import { CapMeter } from '../bars.js';
import { Keys } from './keys.js';
import { Trace } from './trace.js';

const capLabel = (c) => ({ instance: 'Whole instance', workspace: 'This workspace', member: 'You in this workspace', key: 'One of your keys' })[c.scope] ?? c.scope;

function Caps({ usage }) {
  if (usage.caps.length === 0) return html`<${Empty}>No cap applies to you here: your spending is not limited.</${Empty}>`;
  return html`<p>You can spend <strong>${money(usage.room_micro_usd)}</strong> more before a cap stops your requests.</p>
    <div class="charts">${usage.caps.map((c) => html`<div>
      <${CapMeter} label=${`${capLabel(c)}, per ${c.period}`} spent=${c.spent_micro_usd} amount=${c.amount_micro_usd} />
      <p class="hint">Room left: ${money(c.remaining_micro_usd)} (this ${c.period === 'lifetime' ? 'lifetime' : c.period}).</p></div>`)}</div>`;
}

function MyRequests({ workspaceId }) {
  const pages = useCursors();
  const page = useLoad(() => api('GET', `/workspaces/${seg(workspaceId)}/my-requests${qs({ cursor: pages.cursor, limit: 20 })}`), [workspaceId, pages.cursor]);
  return html`<section aria-labelledby="my-req-h"><h2 id="my-req-h">Your requests</h2>
    <${Loaded} state=${page}>${(p) => (p.data.length === 0 ? html`<${Empty}>No requests of yours here yet.</${Empty}>` : html`
      <div class="table-wrap" tabindex="0" role="region" aria-label="Your requests"><table>
        <caption class="sr-only">Your requests, newest first</caption>
        <thead><tr>${['Time', 'Model', 'Route', 'Status', 'Cost'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
        <tbody>${p.data.map((r) => html`<tr><td><a href=${`#/my-usage/${seg(workspaceId)}/${seg(r.id)}`}>${when(r.created_at)}</a></td>
          <td>${r.model ?? '—'}</td><td>${r.route ? `route/${r.route}` : '—'}</td><td>${r.status}${r.error_code ? ` ${r.error_code}` : ''}</td><td>${money(r.cost_micro_usd)}</td></tr>`)}</tbody>
      </table></div><${CursorPager} pages=${pages} next=${p.next_cursor} />`)}</${Loaded}>
  </section>`;
}

export function MyUsage({ route, me }) {
  const known = (id) => me.workspaces.some((w) => w.id === id);
  const [picked, setPicked] = useState(known(route[0]) ? route[0] : (me.workspaces[0]?.id ?? ''));
  if (route[1] && known(route[0])) {
    return html`<${Trace} id=${route[1]} path=${`/workspaces/${seg(route[0])}/my-requests/${seg(route[1])}`} back=${`#/my-usage/${seg(route[0])}`} backLabel="← My usage" me=${me} />`;
  }
  if (!picked) return html`<h1 tabindex="-1">My usage</h1><${Empty}>You are not a member of any workspace yet. Ask a workspace admin to add you.</${Empty}>`;
  return html`<${MyUsageIn} me=${me} picked=${picked} setPicked=${setPicked} />`;
}

function MyUsageIn({ me, picked, setPicked }) {
  const usage = useLoad(() => api('GET', `/workspaces/${seg(picked)}/my-usage`), [picked]);
  return html`<h1 tabindex="-1">My usage</h1>
    <div class="field picker"><label for="my-ws">Workspace</label>
      <select id="my-ws" value=${picked} onChange=${(e) => setPicked(e.currentTarget.value)}>${me.workspaces.map((w) => html`<option value=${w.id}>${w.name}</option>`)}</select></div>
    <${Loaded} state=${usage}>${(u) => html`
      <section aria-labelledby="my-caps-h"><h2 id="my-caps-h">Budget room</h2><${Caps} usage=${u} /></section>
      <section aria-labelledby="my-spend-h"><h2 id="my-spend-h">Your spend, ${u.spend.from} to ${u.spend.to}</h2>
        <p><strong>${money(u.spend.total.cost_micro_usd)}</strong> over ${u.spend.total.requests} requests.</p>
        ${(u.spend.groups ?? []).length > 0 && html`<${Paged} caption="Your spend by model" rows=${u.spend.groups} head=${['Model', 'Requests', 'Tokens in/out', 'Spend']}
          row=${(g) => html`<tr><td>${g.id ?? '—'}</td><td>${g.requests}</td><td>${g.prompt_tokens}/${g.completion_tokens}</td><td>${money(g.cost_micro_usd)}</td></tr>`} />`}
      </section>`}</${Loaded}>
    <${MyRequests} key=${picked} workspaceId=${picked} />
    <${Keys} key=${`k${picked}`} workspaceId=${picked} title="Your API keys" />`;
}
