import type { AuthProvider } from '@modelcontextprotocol/client';
import { randomId, type CredentialVault, type SandboxClient, type Store } from '../../kernel/index.js';
import { listTools, ToolServerFailure, type ListedTool, type ServerAddress } from './mcp.js';
import { launchColumns, sandboxStart, storedLaunch, type StdioLaunch, type StoredLaunch } from './stdio-launch.js';

export interface ToolServer {
  id: string;
  workspaceId: string;
  name: string;
  /** Empty for a stdio server (it has no address: the sandbox runs it). */
  url: string;
  transport: 'streamable-http' | 'sse' | 'stdio';
  /** stdio only: what the sandbox starts. */
  launch?: StoredLaunch;
  hasCredentials: boolean;
  createdAt: number;
}

/** A listed tool with the workspace's settings for it. */
export interface WorkspaceTool extends ListedTool {
  server: ToolServer;
  enabled: boolean;
  needsApproval: boolean;
}

interface ServerRow {
  id: string; workspace_id: string; name: string; url: string; transport: string; credentials: string | null; created_at: number | string;
  command: string | null; args: string | null; env: string | null;
}
interface SettingRow { tool: string; enabled: number | boolean; needs_approval: number | boolean }

const transports = ['streamable-http', 'sse', 'stdio'] as const;
const view = (r: ServerRow): ToolServer => ({
  id: r.id, workspaceId: r.workspace_id, name: r.name, url: r.url, transport: transports.find((t) => t === r.transport) ?? 'streamable-http',
  ...(r.transport === 'stdio' ? { launch: storedLaunch(r) } : {}),
  hasCredentials: r.credentials !== null, createdAt: Number(r.created_at),
});

/** A registration: a remote server (address, optional bearer token) or a command-line one. */
export type NewServer = { workspaceId: string; name: string } & (
  | { transport: 'streamable-http' | 'sse'; url: string; bearer: string | null }
  | { transport: 'stdio'; launch: StdioLaunch }
);

export const originOf = (url: string): string => new URL(url).origin;
const vaultContext = (id: string) => `tools.server:${id}`;

export interface Limits { maxBytes: number; timeoutMs: number; listTtlMs: number }

/** Credentials other than a stored bearer token: the OAuth sign-in (plugins/tools/oauth/access.ts). */
export interface ServerAuth {
  /** null when the server does not use it; throws ToolServerFailure `sign_in` when it needs a sign-in. */
  authFor(s: ToolServer): Promise<AuthProvider | null>;
}

/**
 * Workspace tool servers, per-tool settings and the instance's origin allow-list, in the database
 * (every replica sees the same); each replica caches tool lists for `listTtlMs`.
 */
export class ToolCatalog {
  private readonly lists = new Map<string, { at: number; tools: ListedTool[] }>();
  constructor(
    private readonly store: Store,
    private readonly vault: CredentialVault,
    private readonly limits: Limits,
    /** The sandbox client, when the sandbox plugin is on (it registers after this plugin). */
    private readonly sandbox: () => SandboxClient | undefined,
    private readonly auth?: ServerAuth,
  ) {}

  async addServer(s: NewServer): Promise<ToolServer> {
    const id = `mcp_${randomId(12, 'base64url')}`;
    // A stdio server's credentials are its secret environment values (JSON), sealed like a bearer token.
    const launch = s.transport === 'stdio' ? launchColumns(s.launch) : null;
    const secret = launch ? launch.secrets : s.transport !== 'stdio' ? s.bearer : null;
    const row: ServerRow = {
      id, workspace_id: s.workspaceId, name: s.name, url: s.transport === 'stdio' ? '' : s.url, transport: s.transport,
      credentials: secret ? this.vault.encrypt(secret, vaultContext(id)) : null, created_at: Date.now(),
      command: launch?.command ?? null, args: launch?.args ?? null, env: launch?.env ?? null,
    };
    await this.store.execute('insert into tool_servers (id, workspace_id, name, url, transport, credentials, created_at, command, args, env) values (?,?,?,?,?,?,?,?,?,?)', [
      row.id, row.workspace_id, row.name, row.url, row.transport, row.credentials, row.created_at, row.command, row.args, row.env,
    ]);
    return view(row);
  }

  async servers(workspaceId: string): Promise<ToolServer[]> {
    return (await this.store.execute<ServerRow>('select * from tool_servers where workspace_id = ? order by name', [workspaceId])).map(view);
  }

  async server(workspaceId: string, id: string): Promise<ToolServer | undefined> {
    const rows = await this.store.execute<ServerRow>('select * from tool_servers where workspace_id = ? and id = ?', [workspaceId, id]);
    return rows[0] && view(rows[0]);
  }

  async removeServer(id: string): Promise<void> {
    await this.store.transaction(async (exec) => {
      await exec('delete from tool_settings where server_id = ?', [id]);
      await exec('delete from tool_servers where id = ?', [id]);
    });
    this.lists.delete(id);
  }

  /** Where and how to reach it; the stored token (or secret env values) is decrypted here, at the moment of use. */
  async address(s: ToolServer): Promise<ServerAddress> {
    const rows = await this.store.execute<{ credentials: string | null }>('select credentials from tool_servers where id = ?', [s.id]);
    const stored = rows[0]?.credentials ?? null;
    const secret = stored ? this.vault.decrypt(stored, vaultContext(s.id)) : null;
    if (s.transport !== 'stdio') {
      const auth = (await this.auth?.authFor(s)) ?? null;
      return { serverId: s.id, url: s.url, transport: s.transport, bearer: secret, ...(auth ? { auth } : {}) };
    }
    const start = sandboxStart(s.launch!, secret ? (JSON.parse(secret) as Record<string, string>) : {});
    const sandbox = this.sandbox();
    return {
      transport: 'stdio',
      serverId: s.id,
      key: JSON.stringify([start.command, start.args]),
      open: (maxMessageBytes) => (sandbox?.configured ? sandbox.open({ ...start, maxMessageBytes }) : null),
    };
  }

  /**
   * Whether svc may use the server: a remote one when the instance admins allow its origin. A
   * stdio server has no origin (svc never connects to it); where it may connect is the egress
   * proxy's allow-list, which the instance admins set (plugins/sandbox).
   */
  async allowed(s: ToolServer): Promise<boolean> {
    return s.transport === 'stdio' || this.originAllowed(s.url);
  }

  /**
   * Its tools with their settings. A tool seen for the first time gets its settings row then:
   * enabled, needing approval unless it was declared read-only at that moment. Annotations are
   * hints a server can change later (docs/TOOLS-NOTES.md), so a later change never relaxes the
   * stored setting; only a workspace admin does.
   */
  async tools(s: ToolServer, signal: AbortSignal, fresh = false): Promise<WorkspaceTool[]> {
    // A server whose origin is not allowed is never contacted: the tools it had are still offered
    // (from their settings rows), and calling one tells the model it cannot be used.
    if (!(await this.allowed(s))) return this.known(s);
    const cached = this.lists.get(s.id);
    let listed = cached?.tools;
    if (!listed || fresh || Date.now() - cached!.at > this.limits.listTtlMs) {
      try {
        listed = await listTools(await this.address(s), this.limits, signal);
        this.lists.set(s.id, { at: Date.now(), tools: listed });
      } catch (err) {
        // A stdio server the sandbox cannot run now keeps being offered from its last listing (or its
        // settings rows), so a call tells the model the tool cannot be used right now (README).
        if (fresh || s.transport !== 'stdio' || !(err instanceof ToolServerFailure)) throw err;
        if (!cached) return this.known(s);
        listed = cached.tools;
        this.lists.set(s.id, { at: Date.now(), tools: listed }); // listed again after listTtlMs, not on every request
      }
    }
    const settings = new Map((await this.store.execute<SettingRow>('select tool, enabled, needs_approval from tool_settings where server_id = ?', [s.id])).map((r) => [r.tool, r]));
    const out: WorkspaceTool[] = [];
    for (const t of listed) {
      let row = settings.get(t.name);
      if (!row) {
        row = { tool: t.name, enabled: 1, needs_approval: t.readOnly ? 0 : 1 };
        await this.store.execute(
          // Replicas listing the same new tool at once: the first insert wins, the others do nothing.
          'insert into tool_settings (server_id, tool, enabled, needs_approval) values (?, ?, ?, ?) on conflict do nothing',
          [s.id, t.name, 1, row.needs_approval],
        );
      }
      out.push({ ...t, server: s, enabled: Boolean(Number(row.enabled)), needsApproval: Boolean(Number(row.needs_approval)) });
    }
    return out;
  }

  private async known(s: ToolServer): Promise<WorkspaceTool[]> {
    const rows = await this.store.execute<SettingRow>('select tool, enabled, needs_approval from tool_settings where server_id = ? order by tool', [s.id]);
    return rows.map((r) => ({ name: r.tool, description: '', inputSchema: { type: 'object' }, readOnly: false, server: s, enabled: Boolean(Number(r.enabled)), needsApproval: Boolean(Number(r.needs_approval)) }));
  }

  async knownSettings(serverId: string): Promise<Array<{ tool: string; enabled: boolean; needsApproval: boolean }>> {
    const rows = await this.store.execute<SettingRow>('select tool, enabled, needs_approval from tool_settings where server_id = ?', [serverId]);
    return rows.map((r) => ({ tool: r.tool, enabled: Boolean(Number(r.enabled)), needsApproval: Boolean(Number(r.needs_approval)) }));
  }

  /** Changes one tool's settings; false when the tool was never listed. */
  async setTool(serverId: string, tool: string, change: { enabled?: boolean; needs_approval?: boolean }): Promise<boolean> {
    const rows = await this.store.execute<SettingRow>('select tool, enabled, needs_approval from tool_settings where server_id = ? and tool = ?', [serverId, tool]);
    if (!rows[0]) return false;
    const enabled = change.enabled ?? Boolean(Number(rows[0].enabled));
    const needs = change.needs_approval ?? Boolean(Number(rows[0].needs_approval));
    await this.store.execute('update tool_settings set enabled = ?, needs_approval = ? where server_id = ? and tool = ?', [enabled ? 1 : 0, needs ? 1 : 0, serverId, tool]);
    return true;
  }

  async origins(): Promise<string[]> {
    return (await this.store.execute<{ origin: string }>('select origin from tool_origins order by origin')).map((r) => r.origin);
  }

  async allowOrigin(origin: string): Promise<void> {
    await this.store.execute('insert into tool_origins (origin, created_at) values (?, ?) on conflict do nothing', [origin, Date.now()]);
  }

  async removeOrigin(origin: string): Promise<boolean> {
    const before = (await this.origins()).includes(origin);
    await this.store.execute('delete from tool_origins where origin = ?', [origin]);
    return before;
  }

  async originAllowed(url: string): Promise<boolean> {
    const rows = await this.store.execute('select 1 as ok from tool_origins where origin = ?', [originOf(url)]);
    return rows.length > 0;
  }
}
