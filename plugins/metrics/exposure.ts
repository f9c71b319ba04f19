import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { bearerMatches, GatewayError, renderError } from '../../kernel/index.js';

/** The shortest scrape token accepted: a guessable one would expose the instance's traffic. */
export const minTokenLength = 16;

/**
 * How `/metrics` is reached (README "Metrics"): not at all (the default: the path answers 404),
 * on the service's port with a bearer token, or on a separate address (with the token too when
 * one is set).
 */
export interface Exposure {
  token: string | null;
  listen: { host: string; port: number } | null;
}

/** `host:port` (`0.0.0.0:9464`, `[::1]:9464`) → its parts; a config error names the setting. */
export function parseListen(value: string, setting: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):([0-9]{1,5})$/.exec(value.trim());
  const port = Number(m?.[2]);
  if (!m || port > 65535) throw new Error(`${setting} must be host:port (e.g. 127.0.0.1:9464), not "${value}"`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export function exposureFrom(env: NodeJS.ProcessEnv, config: { tokenEnv: string; listen?: string | undefined }): Exposure {
  const token = env[config.tokenEnv]?.trim() || null;
  if (token !== null && token.length < minTokenLength) throw new Error(`${config.tokenEnv} must be at least ${minTokenLength} characters`);
  const listenValue = env.SVC_METRICS_LISTEN?.trim() || config.listen;
  return { token, listen: listenValue ? parseListen(listenValue, env.SVC_METRICS_LISTEN?.trim() ? 'SVC_METRICS_LISTEN' : 'plugins.metrics.config.listen') : null };
}

/** Refuses a scrape without the token: 401 `invalid_api_key` in the spec's shape. */
export function checkToken(req: IncomingMessage, token: string | null): void {
  if (token !== null && !bearerMatches(req.headers.authorization, token)) {
    throw new GatewayError('invalid_api_key', 'GET /metrics needs the scrape token: Authorization: Bearer <SVC_METRICS_TOKEN>.');
  }
}

/** Writes the registry in the Prometheus text format. */
export async function scrape(registry: Registry, res: ServerResponse): Promise<void> {
  const body = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/** The separate listener: `GET /metrics` and nothing else. */
export async function listenApart(registry: Registry, exposure: Exposure & { listen: NonNullable<Exposure['listen']> }): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0];
      try {
        if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) throw new GatewayError('not_found', `No route for ${req.method} ${path}.`);
        checkToken(req, exposure.token);
        await scrape(registry, res);
      } catch (err) {
        renderError(res, err instanceof GatewayError ? err : new GatewayError('internal_error', 'The metrics could not be read.'));
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(exposure.listen.port, exposure.listen.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return { server, url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/metrics` };
}
