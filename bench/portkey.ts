import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, root, startNode, waitReady } from './child.js';
import { eldProbe } from './eld.js';
import type { Target } from './targets.js';

/** The peer users would pick instead; pinned so runs compare (issue 16). */
export const portkeyVersion = '1.15.2';
const peerDir = join(root, 'bench/.peers', `portkey-${portkeyVersion}`);
const entry = join(peerDir, 'node_modules/@portkey-ai/gateway/build/start-server.js');

/**
 * Installs @portkey-ai/gateway into bench/.peers/ (git-ignored, outside svc's dependencies) the
 * first time; scripts are skipped because its postinstall only patches dev tooling.
 */
function ensureInstalled(log: (line: string) => void): void {
  if (existsSync(entry)) return;
  mkdirSync(peerDir, { recursive: true });
  log(`installing @portkey-ai/gateway@${portkeyVersion} into ${peerDir}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['install', '--prefix', peerDir, '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', `@portkey-ai/gateway@${portkeyVersion}`], { stdio: 'inherit' });
}

/** Portkey headless, forwarding every request to the mock as a custom OpenAI host. */
export async function startPortkey(mockPort: number, logDir: string, log: (line: string) => void): Promise<Target> {
  ensureInstalled(log);
  const port = await freePort();
  const probe = eldProbe(logDir, 'portkey');
  const child = startNode([...probe.flags, entry, '--headless', `--port=${port}`], { ...process.env, ...probe.env }, `${logDir}/portkey.log`, peerDir);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, 'portkey', async () => (await fetch(`${url}/`)).status > 0, 30_000);
  return {
    name: 'portkey',
    url,
    apiKey: 'sk-bench-portkey',
    pid: child.pid,
    eldFile: probe.env.BENCH_ELD_FILE,
    // Seen on Node 24 with 1.15.2: every streamed request answers 500 ("TypeError: immutable" from
    // Headers.append in its response builder, which appends to a fetch Response's headers).
    noStream: `@portkey-ai/gateway@${portkeyVersion} answers 500 to every streamed request on Node ${process.versions.node.split('.')[0]} (TypeError: immutable in its response builder)`,
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `http://127.0.0.1:${mockPort}/v1` },
    model: (id) => id,
    stop: () => child.stop(),
  };
}
