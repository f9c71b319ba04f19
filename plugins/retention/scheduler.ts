import { fileURLToPath } from 'node:url';
import Bree from 'bree';
import type { Logger } from '../../kernel/index.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'retention.schedule_failed': { job: string };
  }
}

/** Bree logs free text; the service logs typed events only, so bree's own lines are dropped. */
const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, log: () => {} };

/**
 * Calls `due(slot)` at every time of the cron schedule (UTC), through bree. `hasSeconds` lets a
 * six-field schedule fire every few seconds (tests of the two-replica claim).
 */
export async function startSchedule(cron: string, log: Logger, due: (slot: Date) => void): Promise<Bree> {
  const bree = new Bree({
    root: false,
    doRootCheck: false,
    logger: quiet as unknown as Bree.BreeLogger,
    hasSeconds: cron.trim().split(/\s+/).length === 6,
    jobs: [{ name: 'retention', path: fileURLToPath(new URL('./tick.js', import.meta.url)), cron, timezone: 'UTC' }],
    workerMessageHandler: ({ message }: { message: unknown }) => {
      if (message === 'due') due(new Date());
    },
    errorHandler: () => log.error('retention.schedule_failed', { job: 'retention' }),
  });
  await bree.start();
  return bree;
}
