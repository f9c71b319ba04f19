import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { MockUpstream } from '../support/mock-upstream.js';
import type { RequestContext } from '../../kernel/index.js';
import { startChatWorld, type ChatWorld } from './setup.js';

/** The short deadlines every fault test runs with (defaults are in the README). */
export const deadlines = { connectMs: 500, firstByteMs: 400, firstTokenMs: 400, idleMs: 400, totalMs: 1500 };
export const upstream = { retries: 2, backoffMs: 20, maxBackoffMs: 100, maxRetryAfterMs: 1500, attemptsDeadlineMs: 6000, cooldownFailures: 3, cooldownMs: 1500 };

/** The second provider's model, a route's fallback in these tests (cheaper than the primary). */
export const backupModel = 'backup:model-b';

declare global {
  // eslint-disable-next-line no-var
  var svcFaultRequests: RequestContext[];
}

/** A test plugin that keeps each request's context, so a test can call `stop()` on it. */
function requestsPlugin(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-faults-')), 'fault-requests.mjs');
  writeFileSync(file, `export default { name: 'fault-requests', register(ctx) { ctx.hook('receive', (rc) => { globalThis.svcFaultRequests.push(rc); }); } };\n`);
  return file;
}

/** A route of the real routing plugin: the first model, then the others as its fallbacks. */
export async function addRoute(w: ChatWorld, name: string, models: string[]): Promise<void> {
  await w.admin.ok('POST', `/workspaces/${w.workspaceId}/routes`, { name, model: models[0], fallbacks: models.slice(1) });
}

export interface FaultWorld extends ChatWorld {
  backup: MockUpstream;
  /** A client that retries nothing itself, with a 20 s ceiling. */
  client: OpenAI;
}

/** A chat world with short deadlines, a second provider `backup` and the request keeper. */
export async function startFaultWorld(extra: { upstream?: Record<string, unknown>; providers?: Record<string, unknown> } = {}, modelFields: Record<string, unknown> = {}): Promise<FaultWorld> {
  globalThis.svcFaultRequests ??= [];
  const w = await startChatWorld(
    {
      plugins: {
        'fault-requests': { module: requestsPlugin() },
        providers: { config: { ...deadlines, ...extra.providers } },
        'chat-api': { config: { upstream: { ...upstream, ...extra.upstream } } },
      },
    },
    modelFields,
  );
  const backup = await new MockUpstream().start();
  await w.admin.provider('backup', backup.url);
  await w.admin.model(backupModel, { input_price: '1.00', output_price: '2.00' });
  return {
    ...w,
    backup,
    client: new OpenAI({ baseURL: `${w.svc.url}/v1`, apiKey: w.apiKey, maxRetries: 0, timeout: 20_000 }),
    stop: async () => {
      await w.stop();
      await backup.stop();
    },
  };
}
