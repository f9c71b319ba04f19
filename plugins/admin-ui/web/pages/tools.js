// Tools and approvals (workspace admins): a workspace's MCP tool servers, each server's tools with
// their settings, the tool call records, and (instance admins) the instance's origin and egress
// allow-lists.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Paged, Empty, ConfirmButton, when } from '../ui.js';
import { WorkspacePicker, firstWorkspace } from './workspace-picker.js';
import { ServerTools } from './tool-list.js';
import { ToolOrigins } from './tool-origins.js';
import { EgressAllowList } from './egress-allow-list.js';
import { ServerForm } from './tool-server-form.js';
import { SignIn } from './tool-sign-in.js';
import { ToolCalls } from './tool-calls.js';

const kinds = { 'streamable-http': 'Streamable HTTP', sse: 'HTTP+SSE', stdio: 'Command line' };

/** A stdio server's command line as typed: arguments holding spaces (or nothing) are quoted. */
const commandLine = (s) => [s.command, ...s.args.map((a) => (/^[^\s"']+$/.test(a) ? a : JSON.stringify(a)))].join(' ');

/** What runs: the URL of a remote server, the command line (and environment names) of a stdio one. */
const Runs = ({ s }) => (s.transport === 'stdio'
  ? html`<code>${commandLine(s)}</code>
      ${Object.keys(s.env).length > 0 && html`<br /><span class="hint">env: ${Object.keys(s.env).join(', ')}</span>`}
      ${s.secret_env.length > 0 && html`<br /><span class="hint">secret env: ${s.secret_env.join(', ')}</span>`}`
  : html`<code>${s.url}</code>`);

/** Origin state of a remote server; a command-line server has none (the egress allow-list governs it). */
const OriginState = ({ s }) => (s.transport === 'stdio'
  ? html`<span class="badge unchecked">egress list</span>`
  : s.origin_allowed
    ? html`<span class="badge connected">allowed</span>`
    : html`<span class="badge could_not_connect">not allowed</span>`);

const Auth = ({ s, base, changed }) => (s.auth === 'oauth'
  ? html`<${SignIn} base=${base} server=${s} changed=${changed} />`
  : s.auth === 'bearer' ? 'Bearer token' : s.transport === 'stdio' && s.has_credentials ? 'secret env' : 'none');

function Servers({ workspaceId, originsVersion, changed }) {
  const base = `/workspaces/${seg(workspaceId)}/tool-servers`;
  const servers = useLoad(() => api('GET', base), [base, originsVersion]);
  const [open, setOpen] = useState(null);
  const shown = servers.data?.data.find((s) => s.id === open);
  return html`<section aria-labelledby="servers-h">
    <h2 id="servers-h">Tool servers</h2>
    <${Loaded} state=${servers}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No tool servers in this workspace yet. Register an MCP server below; its tools are then offered to models in
          conversations (requests with <code>x-svc-conversation</code>), and those needing approval wait for the person's answer.</${Empty}>`
      : html`<${Paged} caption="Tool servers" rows=${d.data} head=${['Name', 'Kind', 'Runs', 'Authentication', 'Origin', 'Added', '']}
          row=${(s) => html`<tr data-server=${s.name}>
            <td>${s.name}</td><td>${kinds[s.transport] ?? s.transport}</td><td><${Runs} s=${s} /></td>
            <td><${Auth} s=${s} base=${base} changed=${servers.reload} /></td>
            <td><${OriginState} s=${s} /></td><td>${when(s.created_at)}</td>
            <td class="actions">
              <button type="button" aria-pressed=${open === s.id ? 'true' : 'false'} onClick=${() => setOpen(open === s.id ? null : s.id)}>Tools of ${s.name}</button>
              <${ConfirmButton} label=${`Remove ${s.name}`} confirmLabel="Remove server"
                question=${`Remove the tool server ${s.name}? Its tools are no longer offered and its tool settings are deleted; its call records stay.`}
                onConfirm=${async () => { await api('DELETE', `${base}/${seg(s.id)}`); setOpen(null); servers.reload(); changed(); }} />
            </td>
          </tr>`} />`)}</${Loaded}>
    ${shown && html`<${ServerTools} key=${`${shown.id} ${shown.sign_in}`} base=${base} server=${shown} />`}
    <${ServerForm} base=${base} done=${(s) => { setOpen(s.id); servers.reload(); changed(); }} />
  </section>`;
}

export function Tools({ me }) {
  const admin = me.person.instance_admin;
  const administers = admin || me.workspaces.some((w) => w.role === 'admin');
  const [workspaceId, setWorkspaceId] = useState(firstWorkspace(me, 'admin'));
  const [originsVersion, setOriginsVersion] = useState(0);
  // Call records name their server: they load again when a server is added or removed.
  const [serversVersion, setServersVersion] = useState(0);
  if (!administers) {
    return html`<h1 tabindex="-1">Tools</h1>
      <${Empty}>Workspace admins set up the tools models may call. Ask an admin of your workspace to register a tool server.</${Empty}>`;
  }
  return html`<h1 tabindex="-1">Tools</h1>
    <p class="hint">MCP tool servers whose tools a workspace's models may call in conversations. A tool that needs approval stops the
      reply until the person who asked approves or refuses the call.</p>
    <${WorkspacePicker} me=${me} value=${workspaceId} onChange=${setWorkspaceId} allLabel=${null} role="admin" />
    ${workspaceId
      ? html`<${Servers} key=${workspaceId} workspaceId=${workspaceId} originsVersion=${originsVersion} changed=${() => setServersVersion((n) => n + 1)} />
        <${ToolCalls} key=${`calls-${workspaceId}`} workspaceId=${workspaceId} serversVersion=${serversVersion} />`
      : html`<${Empty}>Choose a workspace to see its tool servers.</${Empty}>`}
    ${admin && html`<${ToolOrigins} changed=${() => setOriginsVersion((n) => n + 1)} />
      <${EgressAllowList} />`}`;
}
