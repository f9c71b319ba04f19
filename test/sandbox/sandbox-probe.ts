import { createSandboxClient } from '../../plugins/sandbox/client.js';
import type { SandboxClient, SandboxExit } from '../../kernel/index.js';
import { probeTool } from '../support/sandbox-services.js';

export const sandboxSecret = 'sandbox-test-secret-0123456789';

export function client(sandboxUrl: string, egressUrl = '', secret = sandboxSecret): SandboxClient {
  return createSandboxClient({ sandboxUrl, sandboxSecret: secret, egressUrl, egressSecret: '', timeoutMs: 3000 });
}

/**
 * One sandboxed call of the probe tool server: initialize, then each tool call in turn; the
 * decoded results (null where the call ended first) and how the call ended.
 */
export async function probe(c: SandboxClient, calls: Array<[string, Record<string, unknown>]>, between?: (i: number) => Promise<void>): Promise<{ results: unknown[]; exit: SandboxExit }> {
  const session = c.open({ command: 'node', args: [probeTool] });
  const pending = new Map<number, (r: unknown) => void>();
  session.onmessage = (m) => {
    const msg = m as { id: number; result?: { content?: Array<{ text: string }> } };
    pending.get(msg.id)?.(msg.result?.content ? JSON.parse(msg.result.content[0]!.text) : msg.result);
  };
  const ask = (id: number, method: string, params: unknown): Promise<unknown> =>
    Promise.race([new Promise((r) => { pending.set(id, r); void session.send({ jsonrpc: '2.0', id, method, params }); }), session.exited.then(() => null)]);
  await session.start();
  const results: unknown[] = [await ask(0, 'initialize', {})];
  for (const [i, [name, args]] of calls.entries()) {
    results.push(await ask(i + 1, 'tools/call', { name, arguments: args }));
    await between?.(i);
  }
  await session.close().catch(() => undefined);
  return { results: results.slice(1), exit: await session.exited };
}
