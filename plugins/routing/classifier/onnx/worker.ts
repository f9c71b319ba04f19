/**
 * The ONNX encoder's worker thread: loads the operator's model once and embeds texts one request
 * at a time, so inference never runs on the service's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { OnnxEncoder } from './encoder.js';
import type { FromWorker, ToWorker } from './protocol.js';

const port = parentPort!;
const send = (message: FromWorker): void => port.postMessage(message);

async function main(): Promise<void> {
  const started = performance.now();
  let encoder: OnnxEncoder;
  try {
    encoder = await OnnxEncoder.load((workerData as { dir: string }).dir);
    await encoder.embed('warm up');
  } catch (err) {
    send({ kind: 'failed', reason: err instanceof Error ? err.message : String(err) });
    return;
  }
  send({ kind: 'ready', loadMs: Math.round(performance.now() - started) });
  let queue = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    queue = queue.then(async () => {
      try {
        const vectors: Float32Array[] = [];
        for (const text of message.texts) vectors.push(await encoder.embed(text));
        send({ kind: 'vectors', id: message.id, vectors });
      } catch (err) {
        send({ kind: 'error', id: message.id, reason: err instanceof Error ? err.message : String(err) });
      }
    });
  });
}

void main();
