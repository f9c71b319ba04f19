import { toPostgresPlaceholders } from './bound-sql.js';
import { ownParams, type Rows, type WriteStatement } from './write-behind.js';

/** A group's combined statement for one composition of statement texts. */
interface Combined {
  /** With PostgreSQL's `$n` placeholders, numbered across the parts. */
  text: string;
  /** The one part that returns rows, which then come back as its own columns (no JSON). */
  only?: number;
}

/** A node of the compositions seen: the next statement's text, split by whether it returns rows. */
interface Node {
  plain?: Map<string, Node>;
  returning?: Map<string, Node>;
  combined?: Combined;
}

/**
 * What the trie keeps before it starts over: nodes, and characters of combined text. A group under
 * overload can hold hundreds of requests, and each such size is a composition of its own whose
 * text runs to hundreds of KB; kept without a byte bound they raised the scale-out shape's peak
 * RSS by ~70 MiB in the open-loop scenario. A text longer than `maxKeptChars` is made per group
 * and never kept (groups that large are rare and rarely the same size twice).
 */
const maxNodes = 4096;
const maxKeptChars = 32 * 1024;
const maxTotalChars = 1024 * 1024;
let root: Node = {};
let nodes = 0;
let chars = 0;

/** Characters of combined text kept now (tests). */
export const keptChars = (): number => chars;

function startOver(): void {
  root = {};
  nodes = 0;
  chars = 0;
}

/**
 * A group commit's inserts as ONE PostgreSQL statement: each insert becomes a data-modifying CTE
 * (`with w0 as (insert …), w1 as (insert … returning …) select …`), so the group costs one round
 * trip instead of BEGIN, one per statement, and COMMIT. A single statement is atomic like the
 * transaction it replaces. Its parts share one snapshot and cannot see each other's rows, so only
 * inserts into different tables or shapes qualify (plan() makes one per shape; the durable writes
 * of usage records, running totals and holds touch different tables). When one part returns rows
 * (the running totals, in every group) they come back as its own columns; when several do, as JSON
 * with the part's index. `splitRows` hands them back per statement, in order.
 *
 * The combined text depends only on the parts' texts (each a memoized string) and which of them
 * return rows, so it is built and given its `$n` placeholders once per composition and found
 * again through a trie of the parts' texts: building it per group, then converting it character
 * by character, was most of what a group allocated on PostgreSQL (bench/README.md "Twenty-second
 * look"). Returns undefined when the statements do not qualify (anything other than an insert,
 * or a single statement, which needs no wrapping). `params` is one flat list of every part's.
 */
export function oneStatement(statements: readonly WriteStatement[]): { text: string; params: unknown[]; only: number | undefined } | undefined {
  if (statements.length < 2) return undefined;
  let node = root;
  let count = 0;
  for (const s of statements) {
    const returning = s.returning === true;
    let next = (returning ? node.returning : node.plain)?.get(s.sql);
    if (next === undefined) {
      if (!/^insert into /i.test(s.sql)) return undefined;
      next = {};
      if (++nodes > maxNodes) startOver();
      (returning ? (node.returning ??= new Map()) : (node.plain ??= new Map())).set(s.sql, next);
    }
    node = next;
    count += s.count ?? s.params.length;
  }
  let combined = node.combined;
  if (combined === undefined) {
    combined = combine(statements);
    if (combined.text.length <= maxKeptChars) {
      if ((chars += combined.text.length) > maxTotalChars) startOver();
      else node.combined = combined;
    }
  }
  return { text: combined.text, params: oneList(statements, count), only: combined.only };
}

/**
 * Every part's values in order: the list the parts share when they were planned into one, in
 * order and nothing else (group-plan.ts), else a new list of `count` values.
 */
function oneList(statements: readonly WriteStatement[], count: number): unknown[] {
  const first = statements[0]!.params;
  let at = 0;
  for (const s of statements) {
    if (s.params !== first || s.at !== at) break;
    at += s.count!;
  }
  if (at === first.length && at === count) return first;
  const params = new Array<unknown>(count);
  let to = 0;
  for (const s of statements) for (const p of ownParams(s)) params[to++] = p;
  return params;
}

function combine(statements: readonly WriteStatement[]): Combined {
  const parts: string[] = [];
  const returning: number[] = [];
  statements.forEach((s, i) => {
    parts.push(`w${i} as (${s.sql})`);
    if (s.returning) returning.push(i);
  });
  const head = `with ${parts.join(', ')} `;
  if (returning.length === 1) return { text: toPostgresPlaceholders(`${head}select * from w${returning[0]!}`, false), only: returning[0]! };
  const tail = returning.length > 0 ? returning.map((i) => `select ${i} as i, to_jsonb(w${i}) as r from w${i}`).join(' union all ') : 'select null::int as i, null::jsonb as r where false';
  return { text: toPostgresPlaceholders(head + tail, false) };
}

/**
 * The combined statement's rows as each part's own rows, in the parts' order: all of them the
 * part's when `only` names it, else `{i, r}` rows sorted out by `i`.
 */
export function splitRows(rows: Rows, parts: number, only?: number): Rows[] {
  const out: Rows[] = new Array(parts);
  for (let i = 0; i < parts; i++) out[i] = i === only ? rows : [];
  if (only === undefined) for (const row of rows) out[Number(row.i)]!.push(row.r as Record<string, unknown>);
  return out;
}
