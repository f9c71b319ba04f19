/** Messages between the ONNX classifier (main thread) and its worker. */
export type ToWorker = { kind: 'embed'; id: number; texts: string[] };

export type FromWorker =
  | { kind: 'ready'; loadMs: number }
  | { kind: 'failed'; reason: string }
  | { kind: 'vectors'; id: number; vectors: Float32Array[] }
  | { kind: 'error'; id: number; reason: string };
