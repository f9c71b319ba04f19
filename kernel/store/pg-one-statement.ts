import { toPostgresPlaceholders } from './bound-sql.js';
import type { Rows, WriteStatement } from './write-behind.js';

/** A group's combined statement for one composition of statement texts. */
interface Combined {
  /** With PostgreSQL's `$n` placeholders, numbered across the parts. */
  text: string;
}

/** A node of the compositions seen: the next statement's text, split by whether it returns rows. */
interface Node {
  plain?: Map<string, Node>;
  returning?: Map<string, Node>;
  combined?: Combined;
}

/** Compositions kept before the trie starts over (a group's are a few dozen: statement texts × slice sizes). */
const maxNodes = 4096;
let root: Node = {};
let nodes = 0;

/**
 * A group commit's inserts as ONE PostgreSQL statement: each insert becomes a data-modifying CTE
 * (`with w0 as (insert …), w1 as (insert … returning …) select …`), so the group costs one round
 * trip instead of BEGIN, one per statement, and COMMIT. A single statement is atomic like the
 * transaction it replaces. Its parts share one snapshot and cannot see each other's rows, so only
 * inserts into different tables or shapes qualify (plan() makes one per shape; the durable writes
 * of usage records, running totals and holds touch different tables). Rows a part returns come
 * back as JSON with the part's index; `splitRows` hands them back per statement, in order.
 *
 * The combined text depends only on the parts' texts (each a memoized string) and which of them
 * return rows, so it is built and given its `$n` placeholders once per composition and found
 * again through a trie of the parts' texts: building it per group, then converting it character
 * by character, was most of what a group allocated on PostgreSQL (bench/README.md "Twenty-second
 * look"). Returns undefined when the statements do not qualify (anything other than an insert,
 * or a single statement, which needs no wrapping). `params` is one flat list of every part's.
 */
export function oneStatement(statements: readonly WriteStatement[]): { text: string; params: unknown[] } | undefined {
  if (statements.length < 2) return undefined;
  let node = root;
  let count = 0;
  for (const s of statements) {
    const returning = s.returning === true;
    let next = (returning ? node.returning : node.plain)?.get(s.sql);
    if (next === undefined) {
      if (!/^insert into /i.test(s.sql)) return undefined;
      next = {};
      if (++nodes > maxNodes) {
        root = {};
        nodes = 0;
      }
      (returning ? (node.returning ??= new Map()) : (node.plain ??= new Map())).set(s.sql, next);
    }
    node = next;
    count += s.params.length;
  }
  node.combined ??= combine(statements);
  const params = new Array<unknown>(count);
  let at = 0;
  for (const s of statements) for (const p of s.params) params[at++] = p;
  return { text: node.combined.text, params };
}

function combine(statements: readonly WriteStatement[]): Combined {
  const parts: string[] = [];
  const selects: string[] = [];
  statements.forEach((s, i) => {
    parts.push(`w${i} as (${s.sql})`);
    if (s.returning) selects.push(`select ${i} as i, to_jsonb(w${i}) as r from w${i}`);
  });
  const tail = selects.length > 0 ? selects.join(' union all ') : 'select null::int as i, null::jsonb as r where false';
  return { text: toPostgresPlaceholders(`with ${parts.join(', ')} ${tail}`, false) };
}

/** The combined statement's rows (`{i, r}`) as each part's own rows, in the parts' order. */
export function splitRows(rows: Rows, parts: number): Rows[] {
  const out: Rows[] = new Array(parts);
  for (let i = 0; i < parts; i++) out[i] = [];
  for (const row of rows) out[Number(row.i)]!.push(row.r as Record<string, unknown>);
  return out;
}
