import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Summarizes a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
 * the most total (inclusive) time, and self time by area (a plugin, a kernel folder, a package,
 * node internals, GC). Samples can be limited to a window of the monotonic clock (µs, the clock
 * of `process.hrtime`), so start-up and provisioning stay out of a load profile.
 *
 * @example
 * node dist/bench/cpuprofile.js bench/results/<run>/profiles/CPU.….cpuprofile [top=25]
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  where: string;
  /** Share of the window's samples, percent. */
  pct: number;
}

export interface Summary {
  samples: number;
  /** Percent of samples not idle. */
  busyPct: number;
  self: Row[];
  total: Row[];
  areas: Row[];
  /** Self time charged to the innermost frame of svc's own code (dist/) above it: who caused it. */
  owners: Row[];
}

/** Where a frame's code lives, shortened: `plugins/budgets/holds.js:42`, `node:internal/…`, `undici/lib/…`. */
export function where(f: Pick<CallFrame, 'url' | 'lineNumber'>): string {
  if (!f.url) return '';
  const url = f.url.replace(/^file:\/\//, '');
  const nm = url.lastIndexOf('/node_modules/');
  const short = nm >= 0 ? url.slice(nm + 14) : url.includes('/dist/') ? url.slice(url.lastIndexOf('/dist/') + 6) : url;
  return `${short}:${f.lineNumber + 1}`;
}

/** The area a frame belongs to, for the by-area table. */
export function area(f: CallFrame): string {
  const url = f.url.replace(/^file:\/\//, '');
  if (!url) return f.functionName.startsWith('(') ? f.functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, url.includes('internal/') ? 2 : 1).join('/')}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 14).split('/');
    return `pkg ${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const m = /\/dist\/(plugins|providers|kernel|bench|bin)\/([^/]+)/.exec(url);
  return m ? `${m[1]}/${m[2]!.replace(/\.js$/, '')}` : url;
}

const label = (f: CallFrame): string => f.functionName || '(anonymous)';
const ownCode = (f: CallFrame): boolean => f.url.includes('/dist/') && !f.url.includes('/node_modules/') && !f.url.includes('/dist/bench/');

function top(counts: Map<string, number>, total: number, n: number, split: (k: string) => [string, string]): Row[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, c]) => {
      const [name, at] = split(k);
      return { name, where: at, pct: (100 * c) / total };
    });
}

/** Self, total and by-area time of the samples taken between `fromUs` and `toUs` (monotonic µs). */
export function summarize(p: CpuProfile, n = 25, fromUs = -Infinity, toUs = Infinity): Summary {
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const parent = new Map<number, number>();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const areas = new Map<string, number>();
  const owners = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + 1);
  let t = p.startTime;
  let counted = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const leaf = byId.get(p.samples[i]!)!;
    counted++;
    if (leaf.callFrame.functionName === '(idle)') idle++;
    bump(self, `${label(leaf.callFrame)}\t${where(leaf.callFrame)}`);
    bump(areas, area(leaf.callFrame));
    const seen = new Set<string>();
    let owner: string | undefined;
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      if (f.functionName === '(root)') continue;
      const k = `${label(f)}\t${where(f)}`;
      if (owner === undefined && ownCode(f)) owner = k;
      if (!seen.has(k)) {
        seen.add(k);
        bump(total, k);
      }
    }
    bump(owners, owner ?? `(no svc frame) ${area(leaf.callFrame)}\t`);
  }
  const split = (k: string): [string, string] => k.split('\t') as [string, string];
  return {
    samples: counted,
    busyPct: counted ? (100 * (counted - idle)) / counted : 0,
    self: top(self, counted, n, split),
    total: top(total, counted, n, split),
    areas: top(areas, counted, n, (k) => [k, '']),
    owners: top(owners, counted, n, split),
  };
}

/** The summary as markdown tables. */
export function summaryMarkdown(s: Summary): string {
  const table = (title: string, rows: Row[], withWhere: boolean): string[] => [
    `### ${title}`,
    '',
    withWhere ? '| % of samples | function | where |' : '| % of samples | area |',
    withWhere ? '|---:|---|---|' : '|---:|---|',
    ...rows.map((r) => (withWhere ? `| ${r.pct.toFixed(1)} | \`${r.name}\` | ${r.where} |` : `| ${r.pct.toFixed(1)} | ${r.name} |`)),
    '',
  ];
  return [
    `${s.samples} samples, ${s.busyPct.toFixed(1)} % busy (the rest is \`(idle)\`).`,
    '',
    ...table('Self time by function', s.self, true),
    ...table('Self time by area', s.areas, false),
    ...table('Self time charged to the innermost svc function on the stack', s.owners, true),
    ...table('Total (inclusive) time by function', s.total, true),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, n = '25', from, to] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/cpuprofile.js FILE.cpuprofile [top] [fromUs toUs]\n');
    process.exit(2);
  }
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(summaryMarkdown(summarize(p, Number(n), from ? Number(from) : -Infinity, to ? Number(to) : Infinity)) + '\n');
}
