// A workspace's members. Admins add an existing person by email, change role, suspend or reinstate,
// remove. Members see the list only (the API lets them read it, not change it). Nobody gets
// actions on their own row: suspending, removing or demoting yourself would lock you out of the
// page you are on, so that is left to another admin (docs/decisions.md, issue 28).
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton } from '../ui.js';

export function Members({ workspaceId, me, canManage }) {
  const base = `/workspaces/${seg(workspaceId)}/members`;
  const members = useLoad(() => api('GET', base), [workspaceId]);
  const form = useForm({ email: '', role: 'member' }, (v) => ({ email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.email.trim()) ? null : 'Enter the email of a person on this instance, e.g. ada@example.com.' }));
  const [error, setError] = useState(null);
  const change = async (m, body) => {
    setError(null);
    await api('PATCH', `${base}/${seg(m.person_id)}`, body).catch((err) => setError(err.message));
    members.reload();
  };
  const row = (m) => {
    const self = m.person_id === me.person.id;
    const manage = canManage && !self;
    return html`<tr data-member=${m.email}>
      <td>${m.email}${self ? ' (you)' : ''}</td><td>${m.name ?? '—'}</td>
      <td>${manage
        ? html`<label class="sr-only" for=${`role-${m.person_id}`}>Role of ${m.email}</label>
          <select id=${`role-${m.person_id}`} value=${m.role} onChange=${(e) => change(m, { role: e.currentTarget.value })}>
            <option value="member">member</option><option value="admin">admin</option>
          </select>`
        : m.role}</td>
      <td>${m.status}</td>
      ${canManage && html`<td class="actions">${manage && html`
        <button type="button" aria-label=${`${m.status === 'active' ? 'Suspend' : 'Reinstate'} ${m.email}`}
          onClick=${() => change(m, { status: m.status === 'active' ? 'suspended' : 'active' })}>${m.status === 'active' ? 'Suspend' : 'Reinstate'}</button>
        <${ConfirmButton} label=${`Remove ${m.email}`} text="Remove" confirmLabel="Remove"
          question=${`Remove ${m.email} from this workspace? Their keys here stop working.`}
          onConfirm=${async () => { await api('DELETE', `${base}/${seg(m.person_id)}`); members.reload(); }} />`}
      </td>`}
    </tr>`;
  };
  return html`<section aria-labelledby="members-h">
    <h2 id="members-h">Members</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Loaded} state=${members}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No members yet. Add a person by email below (an instance admin creates persons on the People page).</${Empty}>`
      : html`<${Paged} caption="Members" rows=${d.data} search=${(m) => `${m.email} ${m.name ?? ''}`}
          head=${canManage ? ['Email', 'Name', 'Role', 'State', ''] : ['Email', 'Name', 'Role', 'State']} row=${row} />`)}</${Loaded}>
    ${canManage && html`<${Form} form=${form} title="Add a member" submitLabel="Add member" onSubmit=${async (v) => {
      await api('POST', base, { ...v, email: v.email.trim() });
      form.reset();
      members.reload();
      return `${v.email.trim()} added as ${v.role}.`;
    }}>
      <${Field} form=${form} name="email" label="Email of the person" type="email" required />
      <${Field} form=${form} name="role" label="Role" type="select" options=${[['member', 'member'], ['admin', 'admin']]} />
    </${Form}>`}
  </section>`;
}
