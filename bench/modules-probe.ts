import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';

/**
 * Preloaded by bench/modules.ts (`node --import dist/bench/modules-probe.js`): records the URL of
 * every module the process loads, ESM and CommonJS, and writes them to `$BENCH_MODULES_FILE` on
 * SIGWINCH.
 */
const out = process.env.BENCH_MODULES_FILE;
if (out) {
  const seen = new Set<string>();
  registerHooks({
    resolve(specifier, context, next) {
      const r = next(specifier, context);
      seen.add(r.url);
      return r;
    },
  });
  process.on('SIGWINCH', () => writeFileSync(out, JSON.stringify([...seen])));
}
