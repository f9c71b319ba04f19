/** One statement of a write transaction; `returning` asks for its rows. */
export interface WriteStatement {
  sql: string;
  params: unknown[];
  returning?: boolean;
}

export type Rows = Array<Record<string, unknown>>;

/**
 * Runs writes behind the response: batched inserts and the settle's group commit. PostgreSQL's is
 * the pool (orm.ts); SQLite's is a second connection (sqlite-writer.ts).
 */
export interface WriteBehind {
  /** One statement whose result nobody waits on before answering (batched inserts). */
  run(sql: string, params: unknown[]): Promise<void>;
  /** `statements` in one transaction; resolves with each one's rows once committed. Their params may be bound in place. */
  commit(statements: WriteStatement[]): Promise<Rows[]>;
  close(): Promise<void>;
}
