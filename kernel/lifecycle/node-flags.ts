import { setFlagsFromString } from 'node:v8';

/**
 * The node flags the service runs with. `svc serve` applies them itself (bin/svc.ts replaces the
 * process with one started with them, same PID), so a process manager, a Kubernetes command or a
 * plain `node dist/bin/svc.js serve` gets the same heap as `npm start` and the Dockerfile, which
 * pass them too (test/kernel/readme.test.ts checks that they agree). A flag the operator set
 * (on the command line or in NODE_OPTIONS) wins over ours; `SVC_NODE_FLAGS=off` applies none.
 *
 * `--max-semi-space-size=32`: V8 sizes the young generation from the host's memory and let it grow
 * to 128 MB under load (64 MB committed even at idle) although a request's garbage dies young.
 * 16 MB semi-spaces cut peak RSS under 64 connections by ~140 MB, but every scavenge costs about
 * the same whatever its size and each one is a pause a request may meet: 32 MB halves their
 * number (one connection: p99 −12 to −36 %, CPU −2 to −6 %) for more peak RSS (+24 MiB in an A/B,
 * 649 against 537–596 MiB in whole bench runs; bench/RESULTS.md 12:49, docs/decisions.md). The
 * independent harness, which starts `node dist/bin/svc.js serve`, measured the one-connection p99
 * 9.55 ms without it and 5.56 ms with it (2026-11-26). No old-space limit is set: a hard limit
 * would turn a burst of large bodies into an out-of-memory crash instead of a 413.
 *
 * `--min-semi-space-size=32`: the young generation keeps that size from the start. Start-up grows
 * it to the largest size anyway (it keeps most of what it allocates); boot-heap.ts then gives its
 * pages back before the service listens (idle RSS −40 MB), and the floor keeps the one collection
 * that does so from also shrinking it to 1 MB, which an A/B measured at +30 % CPU per request
 * under load (V8 grows it back only when much survives; bench/README.md "Idle memory").
 *
 * `--no-allocation-site-pretenuring`: under concurrency most of a request's objects are still in
 * flight when a scavenge comes, so V8 finds their allocation sites' objects surviving and starts
 * allocating them straight into the old generation ("pretenuring"), and keeps doing so after the
 * load drops: a process that had served 64 connections then promoted 6.6–6.8 KB of every
 * one-connection request into the old generation, where only a full collection frees it (a fresh
 * process 1 KB). Without it: 0.58 KB, CPU a request at 64 connections −15 %, one-connection p99
 * −33 %, peak RSS −19 MiB (A/B in one run, bench/README.md "Nineteenth look"). Node refuses it
 * in NODE_OPTIONS, so an operator turns it back on with `--allocation-site-pretenuring` on the
 * command line.
 */
export const serviceNodeFlags: readonly string[] = ['--max-semi-space-size=32', '--min-semi-space-size=32', '--no-allocation-site-pretenuring'];

/**
 * V8 flags `svc serve` sets in its own process once it listens (`v8.setFlagsFromString`), not on
 * the command line, so start-up runs with V8's defaults. An operator's own value on the command
 * line wins (V8 does not accept these in NODE_OPTIONS); `SVC_NODE_FLAGS=off` sets none.
 *
 * `--invocation-count-for-turbofan=300` (V8's default 3000): hot functions reach optimized code
 * after 300 calls instead of 3000. Until then they run in the interpreter, Sparkplug or Maglev,
 * and there a closure stored into an object's field (ioredis's `Command` keeps its promise's
 * resolve and reject that way; `pg` and the service's own classes do the like) keeps that
 * closure's context, and all it reaches, through every young-generation collection until the
 * next full one (`node dist/bench/retention-probe.js`: 1.5 MB alive a scavenge without TurboFan,
 * ~1 KB with it). Under load the scale-out shape's ioredis and `pg` call objects were promoted so,
 * 750–800 KB a scavenge, for as long as those constructors stayed in Maglev (whole bench runs).
 * With the flag: 70–80 KB alive a scavenge, 18–22 KB promoted; one connection p99 2.69 → 1.90 ms
 * scale-out, 1.61 → 1.08 ms embedded; CPU a request at 64 connections −9 to −11 % (A/B in one
 * run, bench/README.md "Eleventh look"). Set after start-up because on the command line it also
 * compiled start-up's one-off code (migrations, config, plugin registration) with TurboFan: idle
 * RSS +4 MB.
 */
export const serviceRuntimeFlags: readonly string[] = ['--invocation-count-for-turbofan=300'];

/** A flag's option with `max-`/`min-` dropped: the two bounds of one size are set together or not at all. */
const family = (arg: string): string => arg.split('=')[0]!.replace(/_/g, '-').replace(/^--(no-)?(max-|min-)?/, '');

/**
 * The service flags whose option is set neither in `execArgv` nor in NODE_OPTIONS; an operator who
 * set either bound of the young generation keeps their choice for both.
 */
export function missingNodeFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  return notGiven(serviceNodeFlags, execArgv, nodeOptions);
}

/** The runtime flags whose option is set neither in `execArgv` nor in NODE_OPTIONS. */
export function missingRuntimeFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  return notGiven(serviceRuntimeFlags, execArgv, nodeOptions);
}

function notGiven(flags: readonly string[], execArgv: readonly string[], nodeOptions: string): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter(Boolean).map(family));
  return flags.filter((f) => !given.has(family(f)));
}

/**
 * Sets the runtime flags the operator did not set (none with `SVC_NODE_FLAGS=off`); returns them
 * (`api.started` lists them as `node_flags`).
 */
export function applyRuntimeFlags(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): string[] {
  if (env.SVC_NODE_FLAGS === 'off') return [];
  const flags = missingRuntimeFlags(execArgv, env.NODE_OPTIONS);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}

/**
 * Environment `svc serve` sets for glibc's allocator when absent (same restart as the flags).
 *
 * `MALLOC_MMAP_THRESHOLD_=131072`: glibc serves blocks of 128 KiB or more with their own mapping,
 * returned to the system when freed, but by default it raises that threshold each time such a
 * block is freed (up to 32 MiB): after the first large bodies, scrypt's 32 MiB at sign-in and the
 * like, large blocks come from the heap and arenas instead, which never shrink. Setting the value
 * fixes it. Measured (bench/README.md "Native memory"): peak RSS at 64 connections −35 to
 * −55 MiB, idle RSS after provisioning −13 MiB, CPU within the spread. Ignored by other C
 * libraries (musl). An operator's own value, or glibc tunables naming `mmap_threshold`, win.
 */
export const serviceEnvironment: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The service environment variables `env` does not set already. */
export function missingEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(serviceEnvironment)) {
    if (env[k] !== undefined) continue;
    if (k === 'MALLOC_MMAP_THRESHOLD_' && /mmap_threshold/.test(env.GLIBC_TUNABLES ?? '')) continue;
    out[k] = v;
  }
  return out;
}
