// The workspace a page shows: instance admins may also pick "All workspaces" (instance-wide views).
import { api } from '../api.js';
import { html, useLoad } from '../ui.js';

/**
 * `value` '' means all workspaces (instance admins only); otherwise a workspace id. `allLabel`
 * null offers no "all" choice (per-workspace pages); `role: 'admin'` lists only the workspaces
 * the person administers (instance admins see all).
 */
export function WorkspacePicker({ me, value, onChange, allLabel = 'All workspaces', role }) {
  const admin = me.person.instance_admin;
  const list = useLoad(() => (admin ? api('GET', '/workspaces?scope=all').then((d) => d.data) : Promise.resolve(me.workspaces)), [admin]);
  const options = (list.data ?? []).filter((w) => admin || !role || w.role === role);
  return html`<div class="field picker">
    <label for="workspace-pick">Workspace</label>
    <select id="workspace-pick" value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${admin && allLabel ? html`<option value="">${allLabel}</option>` : html`<option value="" disabled>Choose a workspace</option>`}
      ${options.map((w) => html`<option value=${w.id}>${w.name}</option>`)}
    </select>
  </div>`;
}

/** The first workspace a non-admin may see, so their pages open on something. */
export const defaultWorkspace = (me) => (me.person.instance_admin ? '' : (me.workspaces[0]?.id ?? ''));

/** The first of the person's own workspaces (with `role`, where they have it), for per-workspace pages. */
export const firstWorkspace = (me, role) => me.workspaces.find((w) => !role || me.person.instance_admin || w.role === role)?.id ?? '';

/** Money input in US dollars ("12.50") → integer micro-USD, or null when it is not an amount. */
export function microUsd(text) {
  const m = /^\s*(\d+)(?:\.(\d{0,6}))?\s*$/.exec(text);
  return m ? Number(m[1]) * 1e6 + Number((m[2] ?? '').padEnd(6, '0')) : null;
}
