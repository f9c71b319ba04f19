#!/usr/bin/env node
import { Service } from '../kernel/lifecycle/service.js';
import { runCommand } from './commands.js';

const [command = 'serve', ...args] = process.argv.slice(2);

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

const run = command === 'serve' ? serve() : runCommand(command, args);
run.catch((err: unknown) => {
  // Start-up problems (bad config, unknown plugin, unreachable database) end here: one clear line, exit 1.
  process.stderr.write(`svc: ${(err as Error).message}\n`);
  process.exit(1);
});
