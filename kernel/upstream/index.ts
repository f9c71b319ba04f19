export { CallDeadline, RequestAbort, SignalLine, readUpstreamText, type CallSignal, type RequestSignal, upstreamEndpoint, closeUpstream, startedWithFirst, type UpstreamBody, type UpstreamEndpoint } from './http.js';
export { UpstreamPool, CONNECT_TIMEOUT, type PreparedHead, type UpstreamResponse, type UpstreamRequest } from './pool.js';
export { serverSentEvents, type ServerSentEvent } from './sse.js';
export { jsonBody, type JsonBody } from './json-body.js';
export {
  upstreamUnavailable,
  vendorUnavailable,
  rateLimited,
  withHints,
  streamInterrupted,
  transportFailureOf,
  scrubVendorText,
  rateLimitWait,
  type UpstreamErrorContext,
  type UpstreamFailure,
  type UpstreamInterrupted,
} from './failures.js';
export { NativeAdapter, malformedInARow, type NativeWire, type NativeSettings, type WireRequest, type StreamStep, type StreamTranslator } from './native-adapter.js';
export { dataUrl, fileAsText, plainText, splitInstructions, argumentsObject, usageOf, oneChoiceCompletion, oneChoiceChunk, argumentsDelta, usageChunk, ChunkWriter, vendorCount, type FinishReason, type ReplyHead } from './translate.js';
