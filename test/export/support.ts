/** Reading the spend export in tests: fetched with the admin's token, parsed by format. */

export type Row = Record<string, string | number | boolean | null>;

/**
 * RFC 4180 records of a CSV text (quoted fields, doubled quotes, CRLF): a small reader kept here
 * rather than a dependency, since the export's own fields are checked against it.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') record.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      (record = []), (field = ''), i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF');
  return records;
}

/** CSV with a header row → objects keyed by column (every value a string, '' for null). */
export function csvObjects(text: string): Row[] {
  const [head, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i]!])));
}

export const jsonLines = (text: string): Row[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);

export interface Fetched { status: number; headers: Headers; text: string }

export async function fetchExport(url: string, token: string, path: string): Promise<Fetched> {
  const res = await fetch(`${url}/admin/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Sums of an export's rows: what the spend report says of the same records. */
export function sums(rows: Row[], requestsColumn?: string): { cost_micro_usd: number; requests: number; prompt_tokens: number; completion_tokens: number } {
  const out = { cost_micro_usd: 0, requests: 0, prompt_tokens: 0, completion_tokens: 0 };
  for (const r of rows) {
    out.cost_micro_usd += Number(r.cost_micro_usd);
    out.requests += requestsColumn ? Number(r[requestsColumn]) : 1;
    out.prompt_tokens += Number(r.prompt_tokens);
    out.completion_tokens += Number(r.completion_tokens);
  }
  return out;
}
