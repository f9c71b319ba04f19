// uvu's runner, ending the process when every suite has run: a suite that fails half-way can
// leave a server or socket open, which would otherwise keep the run alive until CI kills it.
// With SVC_TEST_TIMES=<file>, each test file's duration is written there (slowest first), so CI
// time can be spent where it goes.
import { writeFileSync } from 'node:fs';
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

const [dir = 'dist/test', pattern] = process.argv.slice(2);
const { suites } = await parse(dir, pattern ? new RegExp(pattern) : undefined, { cwd: process.cwd() });
const timesFile = process.env.SVC_TEST_TIMES;
if (timesFile) {
  // uvu keeps one group per file: [name, ...suite runners]; each runner is timed as it runs.
  const times = new Map();
  const queue = (globalThis.UVU_QUEUE ??= []);
  const push = queue.push.bind(queue);
  queue.push = (group) => {
    const name = group[0];
    const add = group.push.bind(group);
    group.push = (runner) => add(async (...a) => {
      const started = performance.now();
      try {
        return await runner(...a);
      } finally {
        times.set(name, (times.get(name) ?? 0) + performance.now() - started);
      }
    });
    return push(group);
  };
  process.on('exit', () => {
    const rows = [...times].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${name}`);
    writeFileSync(timesFile, rows.join('\n') + '\n');
  });
}
await run(suites, {});
setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
setTimeout(() => process.exit(process.exitCode ?? 0), 3000);
