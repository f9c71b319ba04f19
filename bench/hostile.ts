import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { root } from './child.js';
import { readEld } from './eld.js';
import { floodFigures, type FloodFigures } from './flood.js';
import { hostileShapes, type HostileShape } from './hostile-shapes.js';
import { rssMb } from './proc.js';
import { startMockProcess, startSvcTarget, type Target } from './targets.js';

/**
 * `npm run bench:hostile` (issue 25): hostile request sizes and refusal floods against svc in each
 * shape. For every shape in hostile-shapes.ts one authenticated request is sent while `/healthz`
 * is polled back to back and the process's event-loop probe records its longest delay; then
 * floods of wrong keys and of a rate-limited key run for fixed times while the database's rows and
 * bytes are counted. Prints markdown and writes bench/results/hostile-<time>.md.
 *
 * Settings: BENCH_TARGETS (svc-embedded,svc-scale-out), BENCH_HOSTILE_SHAPES (ids, default all),
 * BENCH_FLOOD_SECONDS (comma list of flood lengths, default 5,15).
 */
const list = (name: string): string[] | undefined => process.env[name]?.split(',').map((s) => s.trim()).filter(Boolean);
const log = (line: string): void => void process.stdout.write(`${line}\n`);

/** The block a shape may cause at most (the issue's target). */
const blockTargetMs = 50;

interface ShapeFigures {
  id: string;
  mb: number;
  status: string;
  code: string;
  seconds: number;
  /** Longest event-loop delay in the gateway while the request ran (probe at 10 ms resolution). */
  maxBlockMs: number | null;
  /** Slowest `/healthz` answer while it ran, and how many were answered. */
  healthMaxMs: number;
  healthAnswered: number;
}

/** POSTs one body, resolves with status and error code (or `error` for a cut connection). */
function post(t: Target, body: Buffer): Promise<{ status: string; code: string }> {
  const u = new URL(t.url);
  return new Promise((done) => {
    const req = request({ host: u.hostname, port: u.port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: `Bearer ${t.apiKey}` } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        let code = '';
        try {
          code = String((JSON.parse(Buffer.concat(parts).toString('utf8')) as { error?: { code?: string } }).error?.code ?? '');
        } catch {
          // not JSON
        }
        done({ status: String(res.statusCode), code });
      });
      res.on('error', () => done({ status: 'error', code: '' }));
    });
    req.on('error', () => done({ status: 'error', code: '' }));
    req.end(body);
  });
}

/** Polls `/healthz` back to back until `stop()`; returns the slowest answer and the count. */
function pollHealth(url: string): () => Promise<{ maxMs: number; answered: number }> {
  let running = true;
  let maxMs = 0;
  let answered = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(`${url}/healthz`);
        await res.arrayBuffer();
        answered++;
      } catch {
        // counted as slow below
      }
      maxMs = Math.max(maxMs, performance.now() - started);
      await new Promise((done) => setTimeout(done, 5));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { maxMs, answered };
  };
}

async function measureShape(t: Target, shape: HostileShape): Promise<ShapeFigures> {
  const body = shape.body(t.model('bench-d0'));
  await readEld(t.pid!, t.eldFile!); // reset the probe
  const stop = pollHealth(t.url);
  const started = performance.now();
  const r = await post(t, body);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((done) => setTimeout(done, 100)); // settle and records behind the reply
  const health = await stop();
  const eld = await readEld(t.pid!, t.eldFile!);
  return { id: shape.id, mb: body.length / 2 ** 20, ...r, seconds, maxBlockMs: eld?.max ?? null, healthMaxMs: health.maxMs, healthAnswered: health.answered };
}

function shapesTable(name: string, rows: ShapeFigures[]): string {
  const lines = [`### ${name}: hostile sizes`, '', '| shape | body MiB | answer | request s | longest block ms | slowest /healthz ms (answered) | ≤ 50 ms |', '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const block = r.maxBlockMs === null ? '—' : r.maxBlockMs.toFixed(0);
    const ok = r.maxBlockMs !== null && r.maxBlockMs <= blockTargetMs && r.healthMaxMs <= blockTargetMs * 2 ? 'yes' : 'no';
    lines.push(`| ${r.id} | ${r.mb.toFixed(1)} | ${r.status}${r.code ? ` ${r.code}` : ''} | ${r.seconds.toFixed(2)} | ${block} | ${r.healthMaxMs.toFixed(0)} (${r.healthAnswered}) | ${ok} |`);
  }
  return lines.join('\n');
}

function floodTable(name: string, rows: FloodFigures[]): string {
  const lines = [`### ${name}: refusal floods`, '', '| flood | seconds | requests | answers | rows gained (by table) | bytes gained |', '|---|---|---|---|---|---|'];
  for (const r of rows) {
    const tables = Object.entries(r.rowsGained).filter(([, n]) => n !== 0).map(([k, n]) => `${k} +${n}`).join(', ') || 'none';
    lines.push(`| ${r.kind} | ${r.seconds} | ${r.requests} | ${r.statuses} | ${tables} | ${r.bytesGained} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const resultsDir = join(root, 'bench/results');
  const logDir = join(resultsDir, `hostile-${stamp}`);
  mkdirSync(logDir, { recursive: true });
  const wantedShapes = list('BENCH_HOSTILE_SHAPES');
  const shapes = hostileShapes.filter((s) => !wantedShapes || wantedShapes.includes(s.id));
  const floodSeconds = (list('BENCH_FLOOD_SECONDS') ?? ['5', '15']).map(Number);
  const targets = list('BENCH_TARGETS') ?? ['svc-embedded', 'svc-scale-out'];
  const mock = await startMockProcess(logDir);
  const out: string[] = [`## Hostile sizes and floods (${started.toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version})`, ''];
  try {
    for (const shape of ['embedded', 'scale-out'] as const) {
      const name = `svc-${shape}`;
      if (!targets.includes(name)) continue;
      let t: Target;
      try {
        t = await startSvcTarget({ shape, mockPort: mock.port, logDir, upstreamIds: ['bench-d0'], modelFields: { can_read_images: true, can_read_pdf: true } });
        // One ordinary request first: start-up work (the tokenizer's tables, JIT) is not a shape's.
        await post(t, Buffer.from(JSON.stringify({ model: t.model('bench-d0'), messages: [{ role: 'user', content: 'warm up' }] })));
      } catch (err) {
        log(`! ${name} skipped: ${(err as Error).message}`);
        continue;
      }
      try {
        const rows: ShapeFigures[] = [];
        for (const s of shapes) {
          const f = await measureShape(t, s);
          log(`  ${name} ${s.id}: ${f.status} ${f.code} ${f.seconds.toFixed(2)} s, block ${f.maxBlockMs?.toFixed(0) ?? '—'} ms, /healthz max ${f.healthMaxMs.toFixed(0)} ms, RSS ${rssMb(t.pid!).toFixed(0)} MiB`);
          rows.push(f);
        }
        out.push(shapesTable(name, rows), '');
      } finally {
        await t.stop();
      }
      const floods = await floodFigures(shape, mock.port, logDir, floodSeconds, log);
      out.push(floodTable(name, floods), '');
    }
  } finally {
    await mock.child.stop();
  }
  out.push(`Target: no shape blocks the event loop for more than ${blockTargetMs} ms; flood rows bounded whatever the flood's length.`);
  const text = out.join('\n');
  writeFileSync(join(resultsDir, `hostile-${stamp}.md`), `${text}\n`);
  log(`\n${text}\n\nWritten: bench/results/hostile-${stamp}.md`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:hostile: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
