#!/usr/bin/env node
import { Service } from '../kernel/lifecycle/service.js';

const words = process.argv.slice(2);

async function serve(): Promise<void> {
  const service = new Service();
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await service.start();
}

/** The sandbox and egress services run without the database or the plugins (their own containers). */
async function standalone(which: 'sandbox' | 'egress'): Promise<void> {
  if (which === 'sandbox') await (await import('../plugins/sandbox/server/main.js')).runSandbox();
  else await (await import('../plugins/egress/main.js')).runEgress();
}

/** `svc` or `svc serve` starts the service; every other command comes from a plugin (Plugin.commands). */
const run = words.length === 0 || words[0] === 'serve' ? serve() : words[0] === 'sandbox' || words[0] === 'egress' ? standalone(words[0]) : new Service({ logSink: process.stderr }).runCommand(words, process.stdout).then(() => process.exit(0));
run.catch((err: unknown) => {
  // Start-up problems (bad config, unknown plugin, unreachable database) end here: one clear line, exit 1.
  process.stderr.write(`svc: ${(err as Error).message}\n`);
  process.exit(1);
});
