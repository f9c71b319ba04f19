import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an OpenAI-compatible server: GET <base>/models (the free check) answers 200 with a
 * model list, or 401 when `requiredKey` is set and the bearer key differs; POST
 * <base>/chat/completions answers one fixed reply. Records what it was sent, so tests can count
 * checks and see which key arrived.
 */
export class ModelsUpstream {
  readonly seen: Array<{ path: string; authorization: string | undefined }> = [];
  requiredKey: string | undefined;
  /** Delay before answering, to test timeouts. */
  delayMs = 0;
  private server: Server | undefined;
  port = 0;

  constructor(requiredKey?: string) {
    this.requiredKey = requiredKey;
  }

  get address(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Checks received on one path (e.g. `/v1/models`). */
  hits(path = '/v1/models'): number {
    return this.seen.filter((s) => s.path === path).length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      const answer = (): void => {
        if (req.method === 'GET' && req.url === '/v1/models') {
          if (this.requiredKey !== undefined && req.headers.authorization !== `Bearer ${this.requiredKey}`) {
            res.writeHead(401, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ object: 'list', data: [{ id: 'llama3:8b', object: 'model', created: 0, owned_by: 'local' }] }));
          return;
        }
        if (req.method === 'POST' && req.url === '/v1/chat/completions') {
          req.resume();
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({
            id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'upstream-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }));
          return;
        }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
      };
      if (this.delayMs > 0) setTimeout(answer, this.delayMs);
      else answer();
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}

/** An address where nothing listens (a port that was just free). */
export async function closedAddress(): Promise<string> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((done) => s.close(() => done()));
  return `http://127.0.0.1:${port}/v1`;
}
