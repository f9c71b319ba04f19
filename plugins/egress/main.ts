import { createLogger } from '../../kernel/index.js';
import { AllowList, parseAllowList } from './allow-list.js';
import { createProxy } from './proxy.js';
import './events.js';

/**
 * `svc egress`: the forward proxy command-line tool servers reach the network through. Settings
 * come from the environment (it runs in its own container, without the database):
 * SVC_EGRESS_HOST (0.0.0.0), SVC_EGRESS_PORT (3128), SVC_EGRESS_ALLOW (`host:port[!private]`,…),
 * SVC_EGRESS_SECRET (lets the main service push the allow-list), SVC_EGRESS_CONNECT_TIMEOUT_MS,
 * SVC_LOG_LEVEL.
 */
export async function runEgress(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const log = createLogger((env.SVC_LOG_LEVEL as 'info' | undefined) ?? 'info');
  const allow = new AllowList(parseAllowList(env.SVC_EGRESS_ALLOW ?? ''));
  const host = env.SVC_EGRESS_HOST ?? '0.0.0.0';
  const server = createProxy({ allow, secret: env.SVC_EGRESS_SECRET ?? '', log, connectTimeoutMs: Number(env.SVC_EGRESS_CONNECT_TIMEOUT_MS ?? 10_000) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(env.SVC_EGRESS_PORT ?? 3128), host, resolve);
  });
  const address = server.address();
  log.info('egress.started', { host, port: typeof address === 'object' && address ? address.port : 0, allowed: allow.size });
  const stop = (): void => void server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
