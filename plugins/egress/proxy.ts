import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { bearerMatches, type Logger } from '../../kernel/index.js';
import { isInternal, resolveHost } from './address.js';
import { validEntries, type AllowList } from './allow-list.js';
import type { RefusalReason } from './events.js';

export interface ProxyOptions {
  allow: AllowList;
  /** Shared secret for `PUT /v1/allow-list`; empty turns pushing off. */
  secret: string;
  log: Logger;
  connectTimeoutMs: number;
}

type Checked = { ok: true; address: string } | { ok: false; reason: RefusalReason };

/**
 * The forward proxy: `CONNECT host:port` tunnels (HTTPS and anything else over TCP) and
 * absolute-form `GET http://host:port/…` requests, each to an allowed destination only, connected
 * by the address that was checked. Its own endpoints: `GET /healthz`, `PUT /v1/allow-list`.
 */
export function createProxy(o: ProxyOptions): Server {
  async function check(host: string, port: number): Promise<Checked> {
    const entry = o.allow.find(host, port);
    if (!entry) return { ok: false, reason: 'not_allowed' };
    let addresses: string[];
    try {
      addresses = await resolveHost(host);
    } catch {
      return { ok: false, reason: 'dns_failed' };
    }
    if (addresses.length === 0) return { ok: false, reason: 'dns_failed' };
    // Every address must pass: a name with one public and one loopback address is refused.
    if (!entry.allowPrivate && addresses.some(isInternal)) return { ok: false, reason: 'private_address' };
    return { ok: true, address: addresses[0]! };
  }

  function refuse(host: string, port: number, reason: RefusalReason): void {
    o.log.warn('egress.refused', { host: host.slice(0, 253), port, reason });
  }

  function dial(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: address, port, timeout: o.connectTimeoutMs });
      s.once('connect', () => { s.setTimeout(0); resolve(s); });
      s.once('timeout', () => { s.destroy(); reject(new Error('timeout')); });
      s.once('error', reject);
    });
  }

  async function onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '');
    if (!target) {
      refuse(req.url ?? '', 0, 'bad_request');
      return void client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    }
    const c = await check(target.host, target.port);
    if (!c.ok) {
      refuse(target.host, target.port, c.reason);
      return void client.end(refusalHead(c.reason));
    }
    let upstream: Socket;
    try {
      upstream = await dial(c.address, target.port);
    } catch {
      refuse(target.host, target.port, 'connect_failed');
      return void client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n');
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.on('error', () => client.destroy());
    upstream.pipe(client).pipe(upstream);
  }

  async function onForward(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const port = Number(url.port || 80);
    const c = url.protocol === 'http:' ? await check(url.hostname, port) : ({ ok: false, reason: 'bad_request' } as const);
    if (!c.ok) {
      refuse(url.hostname, port, c.reason);
      return void res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'egress_refused', reason: c.reason } }));
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const up = httpRequest({ host: c.address, port, method: req.method, path: url.pathname + url.search, headers, setHost: false, timeout: o.connectTimeoutMs });
    up.on('response', (r) => {
      up.setTimeout(0);
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('timeout')));
    up.on('error', () => {
      if (res.headersSent) return void res.destroy();
      refuse(url.hostname, port, 'connect_failed');
      res.writeHead(502).end();
    });
    req.pipe(up);
  }

  function onOwn(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'GET' && req.url === '/healthz') return void json(res, 200, { status: 'ok', allowed: o.allow.size });
    if (req.method === 'PUT' && req.url === '/v1/allow-list') {
      if (!bearerMatches(req.headers.authorization, o.secret)) return void json(res, 401, { error: { code: 'unauthorized' } });
      return void readBody(req, 1 << 20).then((text) => {
        let entries: ReturnType<typeof validEntries> = null;
        try {
          entries = validEntries(JSON.parse(text ?? 'null'));
        } catch { /* not JSON: refused below */ }
        if (!entries) return json(res, 400, { error: { code: 'invalid_request' } });
        o.allow.replace(entries);
        o.log.info('egress.allow_list_set', { allowed: o.allow.size });
        json(res, 200, { allowed: o.allow.size });
      });
    }
    json(res, 404, { error: { code: 'not_found' } });
  }

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/')) return onOwn(req, res);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return void json(res, 400, { error: { code: 'bad_request' } });
    }
    void onForward(req, res, parsed);
  });
  server.on('connect', (req, socket, head) => void onConnect(req, socket, head));
  return server;
}

function splitHostPort(authority: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s/[\]]+):(\d{1,5})$/.exec(authority);
  const port = Number(m?.[2]);
  return m && port >= 1 && port <= 65535 ? { host: m[1]!, port } : null;
}

function refusalHead(reason: RefusalReason): string {
  const body = JSON.stringify({ error: { code: 'egress_refused', reason } });
  return `HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The body as text, or null when it is larger than `limit`. */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= limit) parts.push(b);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}
