import type { EgressAllowEntry } from '../../kernel/index.js';

/**
 * The instance admins' allow-list of `host:port`. From the environment the form is a comma list
 * `host:port` or `host:port!private` (may reach private addresses); the main service replaces it
 * whole over the authenticated `PUT /v1/allow-list`.
 */
export class AllowList {
  private entries = new Map<string, EgressAllowEntry>();

  constructor(initial: readonly EgressAllowEntry[] = []) {
    this.replace(initial);
  }

  get size(): number {
    return this.entries.size;
  }

  replace(entries: readonly EgressAllowEntry[]): void {
    this.entries = new Map(entries.map((e) => [key(e.host, e.port), { ...e, host: normalise(e.host) }]));
  }

  find(host: string, port: number): EgressAllowEntry | undefined {
    return this.entries.get(key(host, port));
  }
}

function normalise(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

const key = (host: string, port: number): string => `${normalise(host)}|${port}`;

/** Parses `host:port[!private]` items; a malformed item stops start-up with its position. */
export function parseAllowList(text: string): EgressAllowEntry[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item, i) => {
      const m = /^(\[[0-9a-f:.]+\]|[^:\s]+):(\d{1,5})(!private)?$/i.exec(item);
      const port = Number(m?.[2]);
      if (!m || port < 1 || port > 65535) throw new Error(`SVC_EGRESS_ALLOW item ${i + 1} is not host:port[!private]`);
      return { host: m[1]!, port, allowPrivate: m[3] !== undefined };
    });
}

/** Checks a pushed allow-list body: an array of `{host, port, allowPrivate?}`. */
export function validEntries(body: unknown): EgressAllowEntry[] | null {
  if (!Array.isArray(body)) return null;
  const out: EgressAllowEntry[] = [];
  for (const e of body as Array<Record<string, unknown>>) {
    if (typeof e !== 'object' || e === null || typeof e.host !== 'string' || e.host.length === 0 || e.host.length > 253) return null;
    if (!Number.isInteger(e.port) || (e.port as number) < 1 || (e.port as number) > 65535) return null;
    if (e.allowPrivate !== undefined && typeof e.allowPrivate !== 'boolean') return null;
    out.push({ host: e.host, port: e.port as number, allowPrivate: e.allowPrivate === true });
  }
  return out;
}
