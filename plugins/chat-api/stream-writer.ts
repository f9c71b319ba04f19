import type { ServerResponse } from 'node:http';
import type { ChatCompletionChunk, GatewayError } from '../../kernel/index.js';

/**
 * Writes server-sent events to the client: chunks as they arrive (waiting for the socket to drain
 * when it pushes back), a final error event, or `data: [DONE]`.
 */
export class StreamWriter {
  constructor(private readonly res: ServerResponse) {}

  open(headers: Record<string, string>): void {
    this.res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  async chunk(chunk: ChatCompletionChunk): Promise<void> {
    if (this.closed) return;
    if (!this.res.write(`data: ${JSON.stringify(chunk)}\n\n`)) {
      await new Promise<void>((done) => {
        const finish = (): void => {
          this.res.off('drain', finish);
          this.res.off('close', finish);
          done();
        };
        this.res.once('drain', finish);
        this.res.once('close', finish);
      });
    }
  }

  /** SPEC.md Stream events: after the first chunk an error ends the stream as a data: error object. */
  error(err: GatewayError): void {
    if (this.closed) return;
    this.res.end(`data: ${JSON.stringify(err.toBody())}\n\n`);
  }

  done(): void {
    if (this.closed) return;
    this.res.end('data: [DONE]\n\n');
  }
}
