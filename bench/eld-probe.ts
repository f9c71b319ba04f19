import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into every gateway the bench starts (`node --import dist/bench/eld-probe.js`), so the
 * bare proxy, Portkey and svc are measured the same way without a debug route in any of them.
 * On SIGUSR2 it writes the event-loop delay since the last signal to `$BENCH_ELD_FILE` (JSON, ms)
 * and starts a fresh histogram: the bench signals once before and once after each measurement.
 */
const file = process.env.BENCH_ELD_FILE;
if (file) {
  // 10 ms resolution is the default: a finer timer would itself add wake-ups to the loop measured.
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns: number): number => ns / 1e6;
    writeFileSync(file, JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) }));
    h.reset();
  });
}
