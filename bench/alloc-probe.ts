import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * Preloaded into svc by `npm run bench -- --allocations` (`node --import dist/bench/alloc-probe.js`).
 * The first SIGHUP starts V8's sampling heap profiler counting every allocation, the garbage too
 * (objects collected by scavenges and mark-compacts stay in the profile); the second writes the
 * profile to `$BENCH_ALLOC_FILE` and stops. What a request allocates, not what it keeps, decides
 * how often the young generation is scavenged, and so the one-connection tail.
 */
const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGHUP', () => {
    void (async () => {
      if (!sampling) {
        sampling = true;
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: Number(process.env.BENCH_ALLOC_INTERVAL || 4096),
          includeObjectsCollectedByMajorGC: true,
          // BENCH_ALLOC_PROMOTED=1 leaves out what scavenges collect: what is left outlived the young
          // generation (copied, then promoted), which is what makes scavenges and mark-compacts slow.
          includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_PROMOTED !== '1',
        });
        writeFileSync(`${file}.started`, '');
        return;
      }
      const { profile } = await session.post('HeapProfiler.stopSampling');
      sampling = false;
      writeFileSync(file, JSON.stringify(profile));
    })();
  });
}
