import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { cell, minus, num, over, paired, runs, type RunData } from './data.js';
import { scenarios, units } from './scenarios.js';
import { spread } from './stats.js';
import { evaluateTargets, type TargetCheck } from './verdicts.js';
import type { TargetName } from './targets.js';
import { burstBodies, burstMb } from './burst.js';
import { layerTable } from './layers.js';

const svcNames: TargetName[] = ['svc-embedded', 'svc-scale-out', 'svc-compare'];
/** Targets that get ÷ bare and − direct columns: svc, and Portkey as the peer (bare only − direct, as a ratio to itself is 1). */
const comparedNames: TargetName[] = ['bare', 'portkey', ...svcNames];

function figureTable(d: RunData, scenario: string, present: TargetName[]): string[] {
  const svcs = comparedNames.filter((n) => present.includes(n));
  const head = ['figure', ...present, ...svcs.flatMap((s) => (s === 'bare' ? [] : [`${s} ÷ bare`])).concat(svcs.map((s) => `${s} − direct`))];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  const names = new Set(present.flatMap((t) => (d.results[scenario]?.[t] ?? []).flatMap((f) => Object.keys(f))));
  for (const fig of Object.keys(units).filter((u) => names.has(u))) {
    const unit = units[fig] ? ` (${units[fig]})` : '';
    const row = [`${fig}${unit}`, ...present.map((t) => cell(spread(runs(d, scenario, t, fig))))];
    for (const s of svcs) if (s !== 'bare') row.push(present.includes('bare') ? cell(paired(d, scenario, s, 'bare', fig, over), '×') : '—');
    for (const s of svcs) {
      row.push(present.includes('direct') && runs(d, scenario, 'direct', fig).some(Number.isFinite) ? cell(paired(d, scenario, s, 'direct', fig, minus)) : '—');
    }
    lines.push(`| ${row.join(' | ')} |`);
  }
  return lines;
}

function targetTable(checks: TargetCheck[], present: TargetName[]): string[] {
  const svcs = svcNames.filter((n) => present.includes(n) || n === 'svc-scale-out');
  const lines = [`| target | limit | ${svcs.map((s) => `${s} | result`).join(' | ')} |`, `|---|---|${svcs.map(() => '---|---').join('|')}|`];
  const verdict = (v?: { pass: boolean | null }) => (!v ? '—' : v.pass === null ? 'n/a' : v.pass ? '**PASS**' : '**FAIL**');
  for (const c of checks) lines.push(`| ${c.what} | ${c.limit} | ${svcs.map((s) => `${c.by[s]?.shown ?? '—'} | ${verdict(c.by[s])}`).join(' | ')} |`);
  return lines;
}

/** The run as markdown: machine, governance, the targets with pass/fail, then every figure. */
export function markdown(d: RunData): { text: string; checks: TargetCheck[] } {
  const present = d.targets.map((t) => t.name);
  const checks = evaluateTargets(d);
  const m = d.machine;
  const out = [
    `# svc benchmark — ${d.date}`,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memGiB} GiB, ${m.os}; Node ${m.node}.`,
    `${d.settings.reps} repetitions × ${d.settings.seconds} s per target and scenario (after ${d.settings.warmupSeconds} s of warm-up each), interleaved ${present.join(' → ')}.`,
    'Figures: median (min–max) over the repetitions; ÷ and − are taken per repetition between targets measured back to back.',
    '',
    '## Governance on in svc',
    '',
    ...d.targets.filter((t) => t.governance).map((t) => `- **${t.name}**: ${t.governance!.join('; ')}`),
    ...d.skipped.map((s) => `- **skipped**: ${s}`),
    '',
    '## Targets (issues 29, 16 and 6)',
    '',
    ...targetTable(checks, present),
    '',
    `Idle RSS (after start-up, the smoke test and ${d.settings.idleSeconds ?? 0} s without requests, before load): ${present.filter((t) => d.idleRssMb?.[t] !== undefined).map((t) => `${t} ${num(d.idleRssMb![t]!)} MiB`).join(', ') || 'not recorded'}.`,
    ...(d.allocations ? [`Allocated / promoted per request at one connection (sampled): ${present.filter((t) => d.allocations![t]).map((t) => `${t} ${num(d.allocations![t]!.allocatedBytes / 1024)} / ${num(d.allocations![t]!.promotedBytes / 1024)} KB`).join(', ')}.`] : []),
    ...(d.sustained ? [`Highest rate with p99 under 1 s against a 20 ms upstream (open loop): ${present.filter((t) => d.sustained![t]).map((t) => `${t} ${num(d.sustained![t]!.rate)} req/s (p99 ${num(d.sustained![t]!.p99Ms)} ms)`).join(', ')}.`] : []),
    ...(d.bootRssMb && Object.keys(d.bootRssMb).length ? [`Idle RSS right after start-up, nothing provisioned: ${present.filter((t) => d.bootRssMb![t] !== undefined).map((t) => `${t} ${num(d.bootRssMb![t]!)} MiB`).join(', ')}.`] : []),
    `Peak RSS (VmHWM at the end of the run): ${present.filter((t) => d.peakRssMb[t] !== undefined).map((t) => `${t} ${num(d.peakRssMb[t]!)} MiB`).join(', ')}.`,
    ...(d.burst ? [`Hostile burst on freshly started gateways after the scenarios (${burstBodies} × ${burstMb} MiB unauthenticated bodies), idle → peak → later: ${present.filter((t) => d.burst![t]).map((t) => { const b = d.burst![t]!; return `${t} ${num(b.beforeMb)} → ${num(b.peakMb)} → ${num(b.afterMb)} MiB ${b.seconds} s later (answers ${b.statuses.join(', ')})`; }).join('; ')}.`] : []),
  ];
  if (d.layers) out.push('', `## Allocation by layer (svc ${d.layers.shape}, ${d.layers.scenario}; each row one plugin more than the row above, a fresh process each)`, '', ...layerTable(d.layers.rows));
  for (const s of scenarios) {
    if (!d.results[s.id]) continue;
    out.push('', `## ${s.title}`, '', ...figureTable(d, s.id, present));
  }
  out.push('', 'cpu_us_per_req: CPU time (user + system, /proc/PID/stat) of the gateway process per completed request; upstream_cpu_us_per_req: the mock upstream\'s. PostgreSQL and Redis server time is not included.');
  return { text: out.join('\n') + '\n', checks };
}

/** `node dist/bench/report.js bench/results/<run>.json`: prints that run's markdown again (after a change to this file). */
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node dist/bench/report.js bench/results/<run>.json\n');
    process.exit(2);
  }
  process.stdout.write(markdown(JSON.parse(readFileSync(file, 'utf8')) as RunData).text);
}
