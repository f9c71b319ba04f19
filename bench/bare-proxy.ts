import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';

/**
 * The floor for any Node gateway: checks a bearer key, parses and re-serializes the JSON body,
 * forwards it over a keep-alive undici Pool and streams the reply back as it arrives. Nothing
 * else — no routing, budgets or records.
 *
 * @example
 * BARE_KEY=sk-bench node dist/bench/bare-proxy.js 8081 http://127.0.0.1:8082/v1   # prints `ready 8081`
 */
const [portArg = '0', upstreamArg = 'http://127.0.0.1:8082/v1'] = process.argv.slice(2);
const expected = `Bearer ${process.env.BARE_KEY ?? 'sk-bench'}`;
const upstream = new URL(upstreamArg);
const base = upstream.pathname.replace(/\/+$/, '');
const pool = new Pool(upstream.origin, { connections: 128 });

function fail(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return fail(res, 404, 'Not found');
  if (req.headers.authorization !== expected) return fail(res, 401, 'Invalid API key');
  const parts: Buffer[] = [];
  for await (const b of req) parts.push(b as Buffer);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    return fail(res, 400, 'Body is not JSON');
  }
  const up = await pool.request({
    path: `${base}/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream' },
    body: JSON.stringify(body),
  });
  const length = up.headers['content-length'];
  res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json'), ...(length ? { 'content-length': String(length) } : {}) });
  for await (const chunk of up.body) res.write(chunk);
  res.end();
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  handle(req, res).catch(() => (res.headersSent ? res.destroy() : fail(res, 502, 'Upstream failed')));
});
server.listen(Number(portArg), '127.0.0.1', () => {
  const a = server.address();
  process.stdout.write(`ready ${typeof a === 'object' && a ? a.port : portArg}\n`);
});
process.on('SIGTERM', () => process.exit(0));
