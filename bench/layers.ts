import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleBoth } from './alloc.js';
import { root } from './child.js';
import { measure, scenarios, upstreamIds } from './scenarios.js';
import { smokeTest, startBare, startMockProcess, startSvcTarget, type Target } from './targets.js';

/**
 * What each layer of svc adds to the bytes allocated (and promoted) per request, from the bare
 * proxy up: svc with no governance plugin (key auth, the chat API, the provider adapter), then
 * with tracing (usage records and spans), budgets (holds, caps, running totals) and the rate
 * limit, the last being what `npm run bench` measures. Each layer is a fresh svc process with the
 * plugins above it turned off in its config. Allocation figures are sampled, so they do not depend
 * on how busy the machine is: the layers compare where timings cannot.
 *
 * `npm run bench` measures the partial layers after its allocation figures (BENCH_LAYERS=0 skips
 * them); `npm run bench -- --layers` measures every row alone (BENCH_PROFILE_SHAPE embedded |
 * scale-out, BENCH_PROFILE_SECONDS, 6).
 */
export const layerScenario = scenarios.find((s) => s.id === 'latency-1c')!;

const off = (...plugins: string[]): Record<string, unknown> => ({ plugins: Object.fromEntries(plugins.map((p) => [p, { enabled: false }])) });

/** The partial layers, from the least svc does; each adds one part to the one before. */
const partial: Array<{ name: string; config: Record<string, unknown> }> = [
  { name: 'svc, no governance plugin (key auth, chat API, adapter)', config: off('budgets', 'rate-limit', 'tracing') },
  { name: '+ tracing (usage record, span)', config: off('budgets', 'rate-limit') },
  { name: '+ budgets (hold, caps, running totals)', config: off('rate-limit') },
];
export const fullLayerName = '+ rate limit (full governance, as measured above)';

export interface LayerRow {
  name: string;
  allocatedBytes: number;
  promotedBytes: number;
}

/** Allocated and promoted bytes per request of one running target (smoke-tested, warmed up first). */
export async function layerRow(t: Target, mockPid: number, name: string, seconds: number): Promise<LayerRow> {
  await smokeTest(t);
  // Longer than the main run's warm-up: a fresh process's code is not yet optimized (bench/README "Eleventh look").
  await measure(layerScenario, t, 4, mockPid);
  const { allocated, promoted } = await sampleBoth(t, layerScenario, seconds, mockPid);
  process.stdout.write(`  ${name}: ${(allocated.bytesPerRequest / 1024).toFixed(1)} KB allocated, ${(promoted.bytesPerRequest / 1024).toFixed(2)} KB promoted\n`);
  return { name, allocatedBytes: allocated.bytesPerRequest, promotedBytes: promoted.bytesPerRequest };
}

/** The partial layers, each a fresh svc process of `shape` against the running mock. */
export async function partialLayers(mockPort: number, mockPid: number, logDir: string, shape: 'embedded' | 'scale-out', seconds: number): Promise<LayerRow[]> {
  const rows: LayerRow[] = [];
  for (const [i, layer] of partial.entries()) {
    const dir = join(logDir, `layer-${i + 1}`);
    mkdirSync(dir, { recursive: true });
    const svc = await startSvcTarget({ shape, mockPort, logDir: dir, upstreamIds, config: layer.config });
    try {
      rows.push(await layerRow(svc, mockPid, layer.name, seconds));
    } finally {
      await svc.stop();
    }
  }
  return rows;
}

/** The table: each row's bytes and what it adds to the row above. */
export function layerTable(rows: LayerRow[]): string[] {
  const kb = (b: number): string => (b / 1024).toFixed(1);
  return [
    '| layer | allocated KB / request | added by the layer | promoted KB / request |',
    '|---|---:|---:|---:|',
    ...rows.map((r, i) => {
      const added = i === 0 ? '—' : `${r.allocatedBytes >= rows[i - 1]!.allocatedBytes ? '+' : '−'}${kb(Math.abs(r.allocatedBytes - rows[i - 1]!.allocatedBytes))}`;
      return `| ${r.name} | ${kb(r.allocatedBytes)} | ${added} | ${(r.promotedBytes / 1024).toFixed(2)} |`;
    }),
  ];
}

/** `npm run bench -- --layers` (run.ts): every row measured alone, the bare proxy first. */
export async function layersAlone(): Promise<void> {
  const seconds = Number(process.env.BENCH_PROFILE_SECONDS || 6);
  const shape = process.env.BENCH_PROFILE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(root, 'bench/results', `${stamp}-layers`);
  mkdirSync(dir, { recursive: true });
  const mock = await startMockProcess(dir);
  const rows: LayerRow[] = [];
  try {
    const bare = await startBare(mock.port, dir);
    try {
      rows.push(await layerRow(bare, mock.child.pid!, 'bare proxy', seconds));
    } finally {
      await bare.stop();
    }
    rows.push(...(await partialLayers(mock.port, mock.child.pid!, dir, shape, seconds)));
    const fullDir = join(dir, 'layer-4');
    mkdirSync(fullDir, { recursive: true });
    const svc = await startSvcTarget({ shape, mockPort: mock.port, logDir: fullDir, upstreamIds });
    try {
      rows.push(await layerRow(svc, mock.child.pid!, '+ rate limit (full governance, as `npm run bench`)', seconds));
    } finally {
      await svc.stop();
    }
  } finally {
    await mock.child.stop();
  }
  const text = [`# Bytes per request by layer (svc ${shape}, ${layerScenario.id}, ${seconds} s each, V8's sampling heap profiler)`, '', ...layerTable(rows), ''].join('\n');
  writeFileSync(join(dir, 'summary.md'), text);
  process.stdout.write(`\n${text}\nWritten: bench/results/${stamp}-layers/summary.md\n`);
}

