import OpenAI from 'openai';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'node:http';
import { McpTestServer } from '../support/mcp-server.js';
import { MockUpstream } from '../support/mock-upstream.js';
import { Admin, startWorld, type World } from '../support/provision.js';
import { helloServer, startServiceProcess, supportDir, type ServiceProcess } from '../support/sandbox-services.js';
import { model } from './support.js';

export const sandboxSecret = 'stdio-suite-sandbox-secret-0123';
export const egressSecret = 'stdio-suite-egress-secret-4567';
/** The test's command-line server (SDK-built), as the sandbox sees it. */
export const stdioServer = join(supportDir, 'mcp-stdio-server.js');
/** The project's packages, bound read-only into the sandbox so the server can import the SDK. */
const nodeModules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'node_modules');

/** Limits small enough to reach in a test, large enough for a Node tool server to start on a busy machine. */
export const limits = { memoryMb: 160, callTimeoutMs: 8000, queueMs: 1500, maxResponseBytes: 256 * 1024 };

export interface StdioWorld extends World {
  mock: MockUpstream;
  /** A remote MCP server registered as `files`, its origin allowed. */
  mcp: McpTestServer;
  sandbox: ServiceProcess;
  /** Stops the sandbox (if still running) and starts a fresh one on the same port. */
  restartSandbox(): Promise<void>;
  egress: ServiceProcess;
  /** A loopback HTTP server answering `hello`, a destination behind the egress proxy. */
  hello: { server: Server; port: number };
  client: OpenAI;
  ws<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  conversation(): Promise<string>;
  calls(requestId: string): Promise<any[]>;
}

/**
 * One sandbox (one slot, so a call can find it busy), one egress proxy, and a service using both,
 * with a model, a remote tool server and nothing else registered: the stdio suite shares them.
 */
export async function startStdioWorld(): Promise<StdioWorld> {
  const hostDir = mkdtempSync(join(tmpdir(), 'svc-stdio-'));
  chmodSync(hostDir, 0o755); // the slot users must reach their folders under it
  const hello = await helloServer();
  const egress = await startServiceProcess('egress', { SVC_EGRESS_HOST: '127.0.0.1', SVC_EGRESS_PORT: '0', SVC_EGRESS_SECRET: egressSecret });
  const startSandbox = (port = 0) => startServiceProcess('sandbox', {
    SVC_SANDBOX_HOST: '127.0.0.1', SVC_SANDBOX_PORT: String(port), SVC_SANDBOX_SECRET: sandboxSecret, SVC_SANDBOX_SLOTS: '1',
    SVC_SANDBOX_WORK_DIR: join(hostDir, 'work'), SVC_SANDBOX_READ_ONLY: `${supportDir},${nodeModules}`, SVC_SANDBOX_EGRESS: `127.0.0.1:${egress.port}`,
    SVC_SANDBOX_MEMORY_MB: String(limits.memoryMb), SVC_SANDBOX_CALL_TIMEOUT_MS: String(limits.callTimeoutMs), SVC_SANDBOX_QUEUE_MS: String(limits.queueMs),
  });
  const sandbox = await startSandbox();
  const mock = await new MockUpstream().start();
  const mcp = await new McpTestServer().start();
  const world = await startWorld(
    {
      plugins: {
        conversations: { config: { flushIntervalMs: 20 } },
        // The gateway's deadline is above the sandbox's, so the sandbox's own time limit is what ends a hanging call.
        tools: { config: { callTimeoutMs: limits.callTimeoutMs + 4000, maxResponseBytes: limits.maxResponseBytes, maxSteps: 3 } },
        sandbox: { config: { timeoutMs: 1500 } },
      },
    },
    { SVC_SANDBOX_URL: sandbox.url, SVC_SANDBOX_SECRET: sandboxSecret, SVC_EGRESS_URL: egress.url, SVC_EGRESS_SECRET: egressSecret },
  );
  await world.admin.provider('local', mock.url);
  await world.admin.model(model);
  const ws = <T = any>(method: string, path: string, body?: unknown) => world.admin.call<T>(method, `/workspaces/${world.workspaceId}${path}`, body);
  if ((await ws('POST', '/tool-servers', { name: 'files', url: mcp.url })).status !== 201) throw new Error('remote server not registered');
  await world.admin.ok('POST', '/tool-origins', { origin: mcp.origin });
  const asKey = new Admin(world.svc.url, world.apiKey);
  const w: StdioWorld = {
    ...world, mock, mcp, sandbox, egress, hello, ws,
    restartSandbox: async () => {
      await w.sandbox.stop();
      w.sandbox = await startSandbox(w.sandbox.port);
    },
    client: new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 }),
    conversation: async () => (await asKey.ok<{ id: string }>('POST', `/workspaces/${world.workspaceId}/conversations`, {})).id,
    calls: async (requestId) => (await world.admin.ok<{ data: any[] }>('GET', `/workspaces/${world.workspaceId}/tool-calls?request_id=${encodeURIComponent(requestId)}`)).data,
    stop: async () => {
      await world.stop();
      await mock.stop();
      await mcp.stop();
      await w.sandbox.stop();
      await egress.stop();
      hello.server.close();
      rmSync(hostDir, { recursive: true, force: true });
    },
  };
  return w;
}
