import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One full, memory-reducing collection before the service listens. Start-up (module loading,
 * migrations, the catalogue) keeps most of what it allocates, so V8 grows the young generation to
 * its largest size while booting and keeps it committed (64 MB at idle with 32 MB semi-spaces,
 * 4 MB of it in use). V8's "last resort" collection (the one it runs before giving up on memory)
 * gives those pages back; `--min-semi-space-size` (node-flags.ts) keeps it from also shrinking the
 * young generation below the size the request path wants (bench/README.md "Idle memory").
 * V8's `gc` is reached through a private context, so nothing else in the process sees it.
 */
export function releaseBootMemory(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (o?: { type: string; execution: string; flavor: string }) => void;
  setFlagsFromString('--no-expose-gc'); // contexts made later (worker threads) get no `gc`
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
