#!/usr/bin/env node
// No static imports: the Node check below must run before any module that needs a newer Node loads.

const words = process.argv.slice(2);

/** package.json "engines": older Nodes fail later in confusing ways (unknown command, syntax errors). */
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `svc: needs Node 22.19 or newer; this is Node ${process.versions.node}.\n` +
      'Run it through the wrapper, which installs Node 24 under ~/.svc-node when needed:\n' +
      `  bash scripts/svc.sh ${words.join(' ')}\n`,
  );
  process.exit(1);
}

/**
 * Starts over as the same process (same PID, `execve`) with the service's node flags and
 * allocator environment when they are missing (kernel/lifecycle/node-flags.ts says why they
 * matter). Runs before anything is loaded.
 */
async function applyServiceNodeFlags(): Promise<void> {
  if (process.env.SVC_NODE_FLAGS === 'off' || typeof process.execve !== 'function') return;
  const { missingEnvironment, missingNodeFlags } = await import('../kernel/lifecycle/node-flags.js');
  const missing = missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
  const env = missingEnvironment(process.env);
  if (missing.length === 0 && Object.keys(env).length === 0) return;
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...env });
}

async function serve(): Promise<void> {
  await applyServiceNodeFlags();
  // Loaded only to serve: `svc --help` and `svc --version` never load the service.
  const { Service } = await import('../kernel/lifecycle/service.js');
  const service = new Service({ releaseBootMemory: true, runtimeFlags: true });
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

if (words.length === 0 || words[0] === 'serve') {
  if (words.length > 1) {
    process.stderr.write('usage: svc serve\n');
    process.exit(2);
  }
  serve().catch((err: unknown) => {
    // Start-up problems (bad config, unknown plugin, unreachable database) end here: one clear line, exit 1.
    process.stderr.write(`svc: ${(err as Error).message}\n`);
    process.exit(1);
  });
} else if ((words[0] === 'sandbox' || words[0] === 'egress') && words.length === 1) {
  standalone(words[0]).catch((err: unknown) => {
    process.stderr.write(`svc: ${(err as Error).message}\n`);
    process.exit(1);
  });
} else {
  import('../kernel/lifecycle/cli.js').then(({ runCli }) => runCli(words, { stdout: process.stdout, stderr: process.stderr, env: process.env })).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`svc: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
