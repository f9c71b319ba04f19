/**
 * One schema change of a plugin, written for both dialects. Migrations are plain SQL so that a
 * reader sees exactly what each dialect gets; the kernel runs them in plugin order at start.
 *
 * @example
 * export const migrations: Migration[] = [{
 *   id: 'identity-001-persons',
 *   sqlite: ['create table persons (id text primary key, email text not null unique)'],
 *   postgresql: ['create table persons (id text primary key, email text not null unique)'],
 * }];
 */
export interface Migration {
  /** Unique across all plugins; conventionally `<plugin>-NNN-<what>`. Never change once released. */
  id: string;
  sqlite: string[];
  postgresql: string[];
}

export type Dialect = 'sqlite' | 'postgresql';
