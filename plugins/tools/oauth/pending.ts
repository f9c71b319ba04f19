import { createHash } from 'node:crypto';
import type { CredentialVault, Store } from '../../../kernel/index.js';
import type { Flow } from './grants.js';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A started sign-in, waiting for the authorization server to send the browser back. */
export interface PendingSignIn {
  workspaceId: string;
  serverId: string;
  personId: string;
  /** The PKCE code verifier. */
  verifier: string;
  flow: Flow;
  /** SHA-256 of the browser-binding nonce, when the start came from a browser session. */
  browser: string | null;
  expiresAt: number;
}

interface Row {
  id: string; workspace_id: string; server_id: string; person_id: string; verifier: string; flow: string; browser: string | null; expires_at: number | string;
}

const context = (id: string) => `tools.signin:${id}`;

/**
 * Unfinished sign-ins (`tool_signins`), keyed by the SHA-256 of their `state`: the state itself
 * is stored nowhere, and the PKCE verifier only as a vault ciphertext. A callback consumes its
 * row in one statement, so it works once, on whichever replica it reaches; rows never called
 * back are removed by the retention job once past `expires_at`.
 */
export class PendingSignIns {
  constructor(private readonly store: Store, private readonly vault: CredentialVault) {}

  async add(state: string, p: PendingSignIn): Promise<void> {
    const id = sha256(state);
    await this.store.execute(
      'insert into tool_signins (id, workspace_id, server_id, person_id, verifier, flow, browser, created_at, expires_at) values (?,?,?,?,?,?,?,?,?)',
      [id, p.workspaceId, p.serverId, p.personId, this.vault.encrypt(p.verifier, context(id)), JSON.stringify(p.flow), p.browser, Date.now(), p.expiresAt],
    );
  }

  /** The sign-in `state` names, removed as it is read; null when unknown or already used. */
  async take(state: string): Promise<PendingSignIn | null> {
    const id = sha256(state);
    const [r] = await this.store.execute<Row>('delete from tool_signins where id = ? returning *', [id]);
    if (!r) return null;
    return {
      workspaceId: r.workspace_id, serverId: r.server_id, personId: r.person_id, verifier: this.vault.decrypt(r.verifier, context(id)),
      flow: JSON.parse(r.flow) as Flow, browser: r.browser, expiresAt: Number(r.expires_at),
    };
  }

  async removeFor(serverId: string): Promise<void> {
    await this.store.execute('delete from tool_signins where server_id = ?', [serverId]);
  }
}
