import { parentPort } from 'node:worker_threads';
import { isGatewayError } from '../../kernel/index.js';
import { checkChatBody } from './body-check.js';
import type { BodyJob, BodyAnswer } from './body-parser.js';

/**
 * The body worker (body-parser.ts): parses and validates large model request bodies, one at a
 * time, so that JSON.parse of 32 MB (or a million tiny messages) never holds the event loop.
 * Only the validated request goes back: unknown fields stay here.
 */
parentPort!.on('message', (job: BodyJob) => {
  let answer: BodyAnswer;
  try {
    answer = { id: job.id, ok: true, ...checkChatBody(new Uint8Array(job.body), job.limits) };
  } catch (err) {
    answer = isGatewayError(err)
      ? { id: job.id, ok: false, code: err.code, message: err.message, param: err.param }
      : { id: job.id, ok: false, code: 'internal_error', message: 'The request body could not be read.' };
  }
  parentPort!.postMessage(answer);
});
