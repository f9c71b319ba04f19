// The menu and the route table: one entry per page. `area` groups the sidebar; `roles` says who
// sees it: 'member' (every signed-in person), 'workspace-admin' (admins of at least one workspace)
// or 'instance-admin'. Instance admins see every page. `landing` pages are where a role starts.
// A page added by another plugin's work merges in with one line here (`admin: true` still means
// instance admins only).
import { Home } from './home.js';
import { Chat } from './chat.js';
import { MyUsage } from './my-usage.js';
import { Workspaces } from './workspaces.js';
import { People } from './people.js';
import { Providers } from './providers.js';
import { Models } from './models.js';
import { CatalogueFeed } from './catalogue-feed.js';
import { Budgets } from './budgets.js';
import { Usage } from './usage.js';
import { Requests } from './requests.js';
import { Recordings } from './recordings.js';
import { Tools } from './tools.js';
import { Conversations } from './conversations.js';
import { Retention } from './retention.js';
import { Diagnostics } from './diagnostics.js';
import { Audit } from './audit.js';
import { SingleSignOn } from './single-sign-on.js';
import { Account } from './account.js';

const admins = ['workspace-admin'];
const instance = ['instance-admin'];
const everyone = ['member'];

export const areas = ['Overview', 'Workspaces', 'Models and providers', 'People', 'System', 'You'];

export const pages = [
  { path: 'home', title: 'Home', area: 'Overview', roles: admins, component: Home, landing: true },
  { path: 'chat', title: 'Chat', area: 'Overview', roles: everyone, component: Chat, landing: true },
  { path: 'my-usage', title: 'My usage', area: 'Overview', roles: everyone, component: MyUsage },
  { path: 'workspaces', title: 'Workspaces', area: 'Workspaces', roles: everyone, component: Workspaces },
  { path: 'budgets', title: 'Budgets', area: 'Workspaces', roles: admins, component: Budgets },
  { path: 'usage', title: 'Usage', area: 'Workspaces', roles: admins, component: Usage },
  { path: 'requests', title: 'Requests', area: 'Workspaces', roles: admins, component: Requests },
  { path: 'recordings', title: 'Recorded prompts', area: 'Workspaces', roles: admins, component: Recordings },
  { path: 'tools', title: 'Tools', area: 'Workspaces', roles: admins, component: Tools },
  { path: 'conversations', title: 'Conversations', area: 'You', roles: everyone, component: Conversations },
  { path: 'providers', title: 'Providers', area: 'Models and providers', roles: instance, component: Providers },
  { path: 'models', title: 'Models', area: 'Models and providers', roles: instance, component: Models },
  { path: 'catalogue-feed', title: 'Catalogue feed', area: 'Models and providers', roles: instance, component: CatalogueFeed },
  { path: 'people', title: 'People', area: 'People', roles: instance, component: People },
  { path: 'single-sign-on', title: 'Single sign-on', area: 'People', roles: instance, component: SingleSignOn },
  { path: 'audit', title: 'Audit log', area: 'System', roles: admins, component: Audit },
  { path: 'retention', title: 'Retention', area: 'System', roles: instance, component: Retention },
  { path: 'diagnostics', title: 'Diagnostics', area: 'System', roles: instance, component: Diagnostics },
  { path: 'account', title: 'Account', area: 'You', roles: everyone, component: Account },
];

/** The roles of the signed-in person (see the header comment). */
export function rolesOf(me) {
  const roles = ['member'];
  if (me.person.instance_admin || me.workspaces.some((w) => w.role === 'admin')) roles.push('workspace-admin');
  if (me.person.instance_admin) roles.push('instance-admin');
  return roles;
}

const rolesOfPage = (p) => p.roles ?? (p.admin ? instance : everyone);

/** The pages this person may open, in menu order. */
export const visiblePages = (me) => {
  const roles = rolesOf(me);
  return pages.filter((p) => roles.includes('instance-admin') || rolesOfPage(p).some((r) => roles.includes(r)));
};

/** The page at `path` if this person may open it; otherwise their landing page. */
export function pageFor(path, me) {
  const visible = visiblePages(me);
  return visible.find((p) => p.path === path) ?? visible.find((p) => p.landing) ?? visible[0];
}

/** The sidebar: the visible pages grouped by area, in the order of `areas` (unknown areas last). */
export function menu(me) {
  const visible = visiblePages(me);
  const names = [...areas, ...new Set(visible.map((p) => p.area ?? 'System').filter((a) => !areas.includes(a)))];
  return names.map((area) => ({ area, pages: visible.filter((p) => (p.area ?? 'System') === area) })).filter((g) => g.pages.length > 0);
}
