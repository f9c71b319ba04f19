import { parentPort } from 'node:worker_threads';

/**
 * Bree's job file: bree runs it in a worker thread at every scheduled time. The purge itself needs
 * the service's store and registered kinds, so the worker only tells the main thread the slot is
 * due and ends; the main thread does batched deletes that yield between batches.
 */
parentPort?.postMessage('due');
parentPort?.postMessage('done');
