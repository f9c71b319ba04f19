import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './child.js';
import { summarize, summaryMarkdown, type CpuProfile } from './cpuprofile.js';
import { measure, scenarios, upstreamIds } from './scenarios.js';
import { smokeTest, startMockProcess, startSvcTarget } from './targets.js';

/**
 * `npm run bench -- --profile`: svc alone under load with `node --cpu-prof`, then the profile's
 * top frames. Only the samples taken while the load ran are summarized (start-up, provisioning
 * and shutdown are left out). The profiler slows svc down: its figures here are not the run's.
 *
 * Settings (environment): BENCH_PROFILE_SECONDS (8) per scenario, BENCH_PROFILE_SHAPE
 * (embedded | scale-out), BENCH_SCENARIOS (default saturation-64c), BENCH_PROFILE_TOP (25),
 * BENCH_COMPARE_ROOT (profile svc built in another checkout instead).
 */
const seconds = Number(process.env.BENCH_PROFILE_SECONDS || 8);
const shape = process.env.BENCH_PROFILE_SHAPE === 'scale-out' ? 'scale-out' : 'embedded';
const ids = (process.env.BENCH_SCENARIOS || 'saturation-64c').split(',').map((s) => s.trim());
const chosen = scenarios.filter((s) => ids.includes(s.id));
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

async function main(): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(root, 'bench/results', `${stamp}-profile`);
  mkdirSync(dir, { recursive: true });
  const mock = await startMockProcess(dir);
  try {
    const compare = process.env.BENCH_COMPARE_ROOT || undefined;
    const svc = await startSvcTarget({ shape, mockPort: mock.port, logDir: dir, upstreamIds, root: compare, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '250'] });
    let from = 0;
    let to = 0;
    try {
      await smokeTest(svc);
      for (const s of chosen) await measure(s, svc, 2, mock.child.pid);
      from = monotonicUs();
      for (const s of chosen) {
        const f = await measure(s, svc, seconds, mock.child.pid);
        process.stdout.write(`${s.id} (under the profiler): ${Object.entries(f).map(([k, v]) => `${k}=${v.toFixed(2)}`).join(' ')}\n`);
      }
      to = monotonicUs();
    } finally {
      await svc.stop();
    }
    // --cpu-prof writes one file per thread (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile): the
    // summary is the main thread's (thread 0); the worker threads' files stay beside it.
    const profiles = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    const file = profiles.find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f)) ?? profiles[0];
    if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const text = [
      `# CPU profile of svc (${shape}) under ${chosen.map((s) => s.id).join(' + ')}, ${seconds} s each`,
      '',
      `Profile: bench/results/${stamp}-profile/${file} (open it in Chrome DevTools → Performance, or VS Code).`,
      '',
      summaryMarkdown(summarize(profile, Number(process.env.BENCH_PROFILE_TOP || 25), from, to)),
    ].join('\n');
    writeFileSync(join(dir, 'summary.md'), text);
    process.stdout.write(`\n${text}\nWritten: bench/results/${stamp}-profile/summary.md\n`);
  } finally {
    await mock.child.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench profile: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
