import { Worker } from 'node:worker_threads';
import { GatewayError, type ChatRequest, type ErrorCode, type Logger, type RequestNeeds } from '../../kernel/index.js';
import { checkChatBody } from './body-check.js';
import type { ValidationLimits } from './validate.js';

export interface BodyJob {
  id: number;
  body: ArrayBuffer;
  limits: ValidationLimits;
}

export type BodyAnswer =
  | { id: number; ok: true; chat: ChatRequest; needs: RequestNeeds }
  | { id: number; ok: false; code: ErrorCode; message: string; param?: string | null };

export interface Parsed {
  chat: ChatRequest;
  needs: RequestNeeds;
}

/**
 * Reads model request bodies into validated requests without holding the event loop (issue 25):
 * a body under `offloadBytes` is parsed and validated in place (a few ms at most); a larger one
 * goes to one worker thread, started on first use, which parses and validates it and sends back
 * only the validated request. JSON.parse of 32 MB took 0.1–1 s depending on its shape; on the
 * worker it delays only other large bodies, never `/healthz`, streams or small requests.
 */
export class BodyParser {
  private worker: Worker | undefined;
  private next = 0;
  private readonly waiting = new Map<number, { done: (a: BodyAnswer) => void; fail: (e: Error) => void }>();

  constructor(
    private readonly limits: ValidationLimits,
    private readonly offloadBytes: number,
    private readonly log: Logger,
  ) {}

  /** A small body's answer comes at once (a refusal is thrown); a large one's as a promise. */
  parse(body: Buffer): Parsed | Promise<Parsed> {
    if (body.length < this.offloadBytes) return checkChatBody(body, this.limits);
    return this.offload(body).then((a) => {
      if (!a.ok) throw new GatewayError(a.code, a.message, a.param ? { param: a.param } : {});
      return { chat: a.chat, needs: a.needs };
    });
  }

  private offload(body: Buffer): Promise<BodyAnswer> {
    const id = ++this.next;
    // A buffer that owns its whole memory moves to the worker without a copy; a slice is copied.
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    const buffer = owned ? (body.buffer as ArrayBuffer) : body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
    const job: BodyJob = { id, body: buffer, limits: this.limits };
    return new Promise((done, fail) => {
      this.waiting.set(id, { done, fail });
      this.started().postMessage(job, [buffer]);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./body-worker.js', import.meta.url));
    w.unref();
    w.on('message', (a: BodyAnswer) => {
      const p = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      p?.done(a);
    });
    const lost = (why: string): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      if (this.waiting.size > 0) this.log.error('chat.body_worker_failed', { reason: why, waiting: this.waiting.size });
      for (const p of this.waiting.values()) p.fail(new GatewayError('internal_error', 'The request body could not be read; retry shortly.'));
      this.waiting.clear();
    };
    w.on('error', (err) => lost(err.name));
    w.on('exit', (code) => lost(`exit ${code}`));
    return (this.worker = w);
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}
