// The menu: one entry per page file. `admin: true` pages are for instance admins only.
import { Workspaces } from './workspaces.js';
import { People } from './people.js';
import { Providers } from './providers.js';
import { Models } from './models.js';
import { Budgets } from './budgets.js';
import { Usage } from './usage.js';
import { Requests } from './requests.js';
import { Tools } from './tools.js';
import { Conversations } from './conversations.js';
import { Retention } from './retention.js';
import { Diagnostics } from './diagnostics.js';
import { Audit } from './audit.js';
import { SingleSignOn } from './single-sign-on.js';
import { Account } from './account.js';
import { Chat } from './chat.js';

export const pages = [
  { path: 'workspaces', title: 'Workspaces', component: Workspaces },
  { path: 'chat', title: 'Chat', component: Chat },
  { path: 'people', title: 'People', component: People, admin: true },
  { path: 'single-sign-on', title: 'Single sign-on', component: SingleSignOn, admin: true },
  { path: 'providers', title: 'Providers', component: Providers, admin: true },
  { path: 'models', title: 'Models', component: Models, admin: true },
  { path: 'budgets', title: 'Budgets', component: Budgets },
  { path: 'usage', title: 'Usage', component: Usage },
  { path: 'requests', title: 'Requests', component: Requests },
  { path: 'tools', title: 'Tools', component: Tools },
  { path: 'conversations', title: 'Conversations', component: Conversations },
  { path: 'audit', title: 'Audit log', component: Audit },
  { path: 'retention', title: 'Retention', component: Retention, admin: true },
  { path: 'diagnostics', title: 'Diagnostics', component: Diagnostics, admin: true },
  { path: 'account', title: 'Account', component: Account },
];

export const findPage = (path, admin) => pages.find((p) => p.path === path && (!p.admin || admin));
