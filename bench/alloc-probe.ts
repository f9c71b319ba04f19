import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A synchronous scavenge through V8's `gc` extension, exposed for this call only. */
function minorGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as (o: { type: string; execution: string }) => void)({ type: 'minor', execution: 'sync' });
}

/**
 * Preloaded into a gateway (`node --import dist/bench/alloc-probe.js`) by `npm run bench` and
 * `npm run bench -- --allocations`. The first SIGHUP starts V8's sampling heap profiler; the second
 * writes the profile to `$BENCH_ALLOC_FILE` and stops. The mode is read at each start from
 * `$BENCH_ALLOC_FILE.mode`: `allocated` (default) counts every allocation, the garbage too (what a
 * request allocates decides how often the young generation is scavenged, and so the one-connection
 * tail); `promoted` leaves out what scavenges collected, so what is left outlived the young
 * generation (copied, then promoted: what makes scavenges and mark-compacts slow). The inspector
 * session is opened at the first signal, so an idle probe costs nothing.
 */
const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  let session: Session | undefined;
  let sampling = false;
  const mode = (): string => {
    try {
      return readFileSync(`${file}.mode`, 'utf8').trim();
    } catch {
      return 'allocated';
    }
  };
  process.on('SIGHUP', () => {
    void (async () => {
      if (!session) {
        session = new Session();
        session.connect();
      }
      if (!sampling) {
        sampling = true;
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: Number(process.env.BENCH_ALLOC_INTERVAL || 4096),
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: mode() !== 'promoted',
        });
        writeFileSync(`${file}.started`, '');
        return;
      }
      // Garbage made since the last scavenge is still in the profile: two young-generation
      // collections first leave only what really outlived it (what is in flight right now aside).
      if (mode() === 'promoted') for (let i = 0; i < 2; i++) minorGc();
      const { profile } = await session.post('HeapProfiler.stopSampling');
      sampling = false;
      writeFileSync(file, JSON.stringify(profile));
    })();
  });
}
