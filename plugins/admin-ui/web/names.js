// Names for the ids the API answers with (workspaces, persons, keys), so no page shows a raw id
// where a name is known.
import { api, seg } from './api.js';
import { useLoad } from './ui.js';

/** id → name for workspaces, persons (instance admins: all; workspace admins: members) and a workspace's keys. */
export async function loadNames(me, workspaceId) {
  const names = new Map();
  const admin = me.person.instance_admin;
  const wsAdmin = workspaceId && (admin || me.workspaces.some((w) => w.id === workspaceId && w.role === 'admin'));
  const [workspaces, persons, members, keys] = await Promise.all([
    admin ? api('GET', '/workspaces?scope=all').then((d) => d.data) : Promise.resolve(me.workspaces),
    admin ? api('GET', '/persons').then((d) => d.data) : Promise.resolve([]),
    wsAdmin ? api('GET', `/workspaces/${seg(workspaceId)}/members`).then((d) => d.data).catch(() => []) : Promise.resolve([]),
    workspaceId ? api('GET', `/workspaces/${seg(workspaceId)}/keys`).then((d) => d.data).catch(() => []) : Promise.resolve([]),
  ]);
  for (const w of workspaces) names.set(w.id, w.name);
  for (const p of persons) names.set(p.id, p.email);
  for (const m of members) names.set(m.person_id, m.email);
  for (const k of keys) names.set(k.id, `${k.name} (${k.prefix}…)`);
  // Instance-wide views name keys too: the keys of the first 20 workspaces.
  if (admin && !workspaceId) {
    const all = await Promise.all(workspaces.slice(0, 20).map((w) => api('GET', `/workspaces/${seg(w.id)}/keys`).then((d) => d.data).catch(() => [])));
    for (const k of all.flat()) names.set(k.id, `${k.name} (${k.prefix}…)`);
  }
  names.set(me.person.id, me.person.email);
  return names;
}

/** `name(id)` from loadNames, falling back to the id itself (or a dash). */
export function useNames(me, workspaceId = '') {
  const state = useLoad(() => (me ? loadNames(me, workspaceId) : Promise.resolve(new Map())), [workspaceId, !!me]);
  return (id) => (id === null || id === undefined ? '—' : (state.data?.get(id) ?? id));
}
