/** One statement of a write transaction; `returning` asks for its rows. */
export interface WriteStatement {
  sql: string;
  /** Its values; with `at`, a list shared by the statements of one commit, its `count` values from `at` (group-plan.ts). */
  params: unknown[];
  at?: number;
  count?: number;
  returning?: boolean;
}

/** A statement's own values: its list, or its part of a shared one (copied). */
export function ownParams(s: WriteStatement): unknown[] {
  return s.at === undefined ? s.params : s.params.slice(s.at, s.at + s.count!);
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
