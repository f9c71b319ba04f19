// uvu's runner, ending the process when every suite has run: a suite that fails half-way can
// leave a server or socket open, which would otherwise keep the run alive until CI kills it.
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

const [dir = 'dist/test', pattern] = process.argv.slice(2);
const { suites } = await parse(dir, pattern ? new RegExp(pattern) : undefined, { cwd: process.cwd() });
await run(suites, {});
setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
setTimeout(() => process.exit(process.exitCode ?? 0), 3000);
