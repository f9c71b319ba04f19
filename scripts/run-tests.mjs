// Runs every uvu suite under dist/test once per deployment shape (embedded; PostgreSQL + Redis),
// with c8 coverage, and ends with the line `N passed, N failed`.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';

const ci = process.env.CI === 'true';
const only = process.argv[2]; // optional file pattern, e.g. `cache`

function reachable(port) {
  return new Promise((done) => {
    const s = connect({ host: '127.0.0.1', port });
    s.setTimeout(1500);
    s.once('connect', () => { s.destroy(); done(true); });
    s.once('error', () => done(false));
    s.once('timeout', () => { s.destroy(); done(false); });
  });
}

const shapes = ['embedded'];
const pgUp = await reachable(5432);
const redisUp = await reachable(6379);
if (pgUp && redisUp) shapes.push('scale-out');
else if (ci) {
  console.error(`CI=true but ${pgUp ? '' : 'PostgreSQL (127.0.0.1:5432) '}${redisUp ? '' : 'Redis (127.0.0.1:6379) '}is unreachable: the scale-out shape cannot be skipped in CI.`);
  console.log('0 passed, 1 failed');
  process.exit(1);
} else console.warn('PostgreSQL or Redis unreachable: running the embedded shape only (CI never skips it).');

mkdirSync('coverage', { recursive: true });

/**
 * The shapes run side by side, each in its own process with its own coverage folder: most of a
 * suite's time is waiting (timers, a browser, a database), so two shapes on two cores take little
 * longer than the slower one alone (serially ~28 minutes on a slow day of this machine kind,
 * 2026-11-27). Each shape's output is printed whole, in order, when it ends.
 */
function runShape(shape) {
  const args = ['node_modules/c8/bin/c8.js', '--reporter=text-summary', '--all', '--src', 'dist', '--exclude', 'dist/test/**', '--exclude', 'dist/bench/**',
    '--temp-directory', `coverage/tmp-${shape}`, '--report-dir', `coverage/${shape}`,
    process.execPath, '--enable-source-maps', 'scripts/uvu.mjs', 'dist/test', only ? `${only}.*\\.test\\.js$` : '\\.test\\.js$'];
  const times = `coverage/times-${shape}.txt`;
  rmSync(times, { force: true }); // a file left by an earlier run would be read as this run's
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, SVC_TEST_SHAPE: shape, SVC_TEST_TIMES: times }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    // A hung suite must not hold CI until its deadline: each shape gets at most 24 minutes.
    let timedOut = false;
    const guard = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid, 'SIGKILL'); // the whole group: c8, the suites' process and what it started
    }, 24 * 60_000);
    child.on('close', (status) => {
      clearTimeout(guard);
      done({ shape, status, stdout, stderr, timedOut, times });
    });
  });
}

const results = await Promise.all(shapes.map(runShape));
let passed = 0;
let failed = 0;
for (const r of results) {
  console.log(`\n=== shape: ${r.shape}`);
  if (r.timedOut) console.error(`shape ${r.shape}: stopped after 24 minutes`);
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (existsSync(r.times)) console.log(`slowest test files (${r.shape}):\n${readFileSync(r.times, 'utf8').split('\n').slice(0, 8).join('\n')}`);
  const total = Number(/Total:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const ok = Number(/Passed:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  passed += ok;
  failed += total - ok - skipped;
  if (r.status !== 0 && total - ok - skipped === 0) failed += 1; // a crash or a suite that threw outside a test
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
