import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { root, startNode, waitReady } from './child.js';
import { rssMb } from './proc.js';

/**
 * `npm run bench -- --modules`: which modules an idle svc (embedded defaults, no routes) loaded,
 * and each package's share of the idle RSS: the package's entry imported alone into a fresh node,
 * RSS after a full collection over the same node without it (both with 1 MB semi-spaces, so the young generation an import grew does not count). Shares do not add up exactly (shared
 * dependencies count in each), but rank what to load later. svc's own files are listed by folder
 * with their count and size. Prints a markdown table (bench/README.md "Idle memory").
 */
interface Row { name: string; what: string; mb: number; files: number; kb: number }

const packageOf = (path: string): string | undefined => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  return m?.[1];
};

const builtins = ['node:http', 'node:https', 'node:crypto', 'node:zlib', 'node:worker_threads', 'node:stream', 'node:dns'];

/** RSS in MB of a fresh node after importing `url` (or nothing) and a full collection. */
function rssAfter(url: string | undefined): number {
  // reflect-metadata first, as svc loads it (tsyringe refuses to load without it), and the node
  // built-ins every svc loads anyway, so a package's share is its own.
  const code = `await import('reflect-metadata'); ${builtins.map((b) => `await import('${b}');`).join(' ')} ${url ? `await import(${JSON.stringify(url)});` : ''} globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); globalThis.gc(); process.stdout.write(String(process.memoryUsage().rss));`;
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return Number(out) / 2 ** 20;
  } catch {
    return NaN; // a file that cannot load alone (it needs its package's set-up): no share
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-modules-'));
  const file = join(dir, 'modules.json');
  const child = startNode(['--import', join(root, 'dist/bench/modules-probe.js'), 'dist/bin/svc.js', 'serve'], { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_'))), SVC_DATA_DIR: dir, SVC_HOST: '127.0.0.1', SVC_PORT: '0', SVC_LOG_LEVEL: 'info', BENCH_MODULES_FILE: file }, join(dir, 'svc.log'));
  try {
    await waitReady(child, 'svc', async () => readFileSync(child.log, 'utf8').includes('"api.started"'), 30_000);
    await sleep(2000);
    const idle = rssMb(child.pid!);
    process.kill(child.pid!, 'SIGWINCH');
    await sleep(300);
    const urls = (JSON.parse(readFileSync(file, 'utf8')) as string[]).filter((u) => u.startsWith('file:'));
    const groups = new Map<string, { first: string; files: number; bytes: number }>();
    for (const url of urls) {
      const path = fileURLToPath(url);
      const pkg = packageOf(path);
      const own = !pkg && path.startsWith(join(root, 'dist')) ? `svc ${path.slice(join(root, 'dist').length + 1).split('/').slice(0, 2).join('/')}` : undefined;
      const key = pkg ?? own ?? path;
      const g = groups.get(key) ?? { first: url, files: 0, bytes: 0 };
      g.files++;
      g.bytes += statSync(path).size;
      groups.set(key, g);
    }
    const base = rssAfter(undefined);
    const rows: Row[] = [];
    for (const [name, g] of groups) {
      const isPackage = !name.startsWith('svc ') && !name.startsWith('/');
      // Only top-level packages (not ones svc reaches through another package) get their own share.
      const mb = isPackage ? Math.max(0, rssAfter(g.first) - base) : NaN; // NaN stays NaN
      rows.push({ name, what: isPackage ? 'package' : 'svc code', mb, files: g.files, kb: g.bytes / 1024 });
    }
    rows.sort((a, b) => (Number.isNaN(b.mb) ? -1 : b.mb) - (Number.isNaN(a.mb) ? -1 : a.mb) || b.kb - a.kb);
    const lines = [
      `Idle svc (embedded defaults, no routes) ${idle.toFixed(0)} MiB RSS; a bare \`node\` after a full collection ${base.toFixed(0)} MiB.`,
      '',
      '| module | RSS when imported alone (MiB over bare node) | files loaded | source KB |',
      '|---|---:|---:|---:|',
      ...rows.map((r) => `| ${r.name} | ${Number.isNaN(r.mb) ? '—' : r.mb.toFixed(1)} | ${r.files} | ${r.kb.toFixed(0)} |`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench modules: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
