import type pg from 'pg';
import { bindInPlace } from './bound-sql.js';
import type { Rows } from './write-behind.js';

/** Values as PostgreSQL's text: the writer reads back only totals, which callers turn into numbers. */
const unparsed = (value: string): string => value;
const asText = { getTypeParser: () => unparsed } as unknown as pg.CustomTypesConfig;

/**
 * The group commit's own PostgreSQL connection (pg's client, no pool, no query builder). Groups
 * commit one at a time, so one connection is all they use; through the ORM each group paid
 * kysely's executor, a pool checkout and release and their promises (~1.6 KB a request at one
 * connection, where a group holds two or three requests: bench/README.md "Twenty-seventh look").
 * Values come back as text, unparsed (the running totals are bigints, which pg would otherwise
 * parse digit by digit into a string anyway).
 *
 * A connection that fails (a socket error, a timeout, an end) is dropped and the next call opens a
 * new one; a statement's own error (it has a SQLSTATE) leaves the connection as it is.
 */
export class PgWriter {
  private client: pg.Client | undefined;
  private opening: Promise<pg.Client> | undefined;
  private closed = false;

  constructor(private readonly settings: { url: string; timeoutMs: number }) {}

  /** Runs one statement (autocommit: it is its own transaction) with `params` bound in place. */
  async run(text: string, params: unknown[]): Promise<Rows> {
    if (this.closed) throw Object.assign(new Error('the store is closed'), { code: 'ERR_WRITER_STOPPED' });
    const client = this.client ?? (await (this.opening ??= this.open().finally(() => (this.opening = undefined))));
    bindInPlace(params);
    try {
      return (await client.query<Record<string, unknown>>({ text, values: params, types: asText })).rows;
    } catch (err) {
      if (!hasSqlState(err)) this.drop(client);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.opening?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async open(): Promise<pg.Client> {
    // Loaded here, not at the top: the embedded shape never pays for the driver's memory.
    const { default: driver } = await import('pg');
    const client = new driver.Client({ connectionString: this.settings.url, connectionTimeoutMillis: this.settings.timeoutMs, keepAlive: true });
    // Without a listener a lost connection's error would end the process; it is dropped instead.
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    await client.connect();
    if (this.closed) {
      this.drop(client);
      throw Object.assign(new Error('the store is closed'), { code: 'ERR_WRITER_STOPPED' });
    }
    this.client = client;
    return client;
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => {});
    void client.end().catch(() => {});
  }
}

/** An error PostgreSQL answered (five-character SQLSTATE), as opposed to a failed connection. */
function hasSqlState(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
