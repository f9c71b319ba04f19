import { readFileSync } from 'node:fs';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { RequestContext } from '../../kernel/index.js';
import { otlpAttributes } from './otlp-attributes.js';
import { attemptAttributes, toolCallAttributes } from './records.js';

/** SVC_OTLP_HEADERS: `name=value,name=value` (values may be percent-encoded, as in OTEL_* headers). */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim().toLowerCase();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not percent-encoded: used as written.
    }
    if (name) headers[name] = value;
  }
  return headers;
}

/** A collector base URL (no path) gets the OTLP/HTTP traces path; a URL with a path is used as given. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

export interface OtlpOptions {
  endpoint: string;
  headers: Record<string, string>;
  serviceVersion: string;
  /** How often queued spans are sent, and how long one send may take. */
  delayMs: number;
  timeoutMs: number;
  /** Spans waiting beyond this are dropped rather than held: the collector may be away. */
  maxQueue: number;
}

/**
 * Sends a span per model request to an OTLP/HTTP collector through the OpenTelemetry SDK. Spans
 * are queued and sent in batches off the request path; with the collector away, sends time out and
 * the bounded queue drops what does not fit, so a request is never slowed or failed by export.
 * The tracer provider is private to this service (never registered globally).
 */
export class OtlpExport {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;

  constructor(o: OtlpOptions) {
    const exporter = new OTLPTraceExporter({ url: tracesUrl(o.endpoint), headers: o.headers, timeoutMillis: o.timeoutMs, concurrencyLimit: 2 });
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'svc', 'service.version': o.serviceVersion }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: o.delayMs, exportTimeoutMillis: o.timeoutMs, maxQueueSize: o.maxQueue, maxExportBatchSize: Math.min(512, o.maxQueue) })],
    });
    this.tracer = this.provider.getTracer('svc.tracing', o.serviceVersion);
  }

  /**
   * Queues the request's span (timed from when it was received) and its children, as stored: one
   * per upstream model call and one per workspace tool call (`execute_tool <tool>`, GenAI
   * conventions). Returns at once.
   */
  add(rc: RequestContext, latencyMs: number, usage: Array<string | number | null>): void {
    const attributes = otlpAttributes(rc, latencyMs, usage);
    const start = rc.receivedAt.getTime();
    const span = this.tracer.startSpan(`chat ${rc.state.chat?.model ?? 'unknown'}`, { kind: SpanKind.CLIENT, startTime: start, attributes });
    if (rc.state.outcome?.errorCode) span.setStatus({ code: SpanStatusCode.ERROR, message: rc.state.outcome.errorCode });
    // The private provider is never registered globally: the parent goes in an explicit context.
    const parent = trace.setSpan(ROOT_CONTEXT, span);
    const child = (name: string, kind: SpanKind, from: number, to: number, error: string | null, attrs: Record<string, string | number | boolean>): void => {
      const s = this.tracer.startSpan(name, { kind, startTime: start + from, attributes: attrs }, parent);
      if (error) s.setStatus({ code: SpanStatusCode.ERROR, message: error });
      s.end(start + Math.max(from, to));
    };
    for (const a of rc.state.outcome?.attempts ?? []) child('upstream.attempt', SpanKind.CLIENT, a.start, a.end || a.start, a.outcome === 'ok' ? null : a.outcome, attemptAttributes(a));
    for (const t of rc.state.toolCalls ?? []) {
      child(`execute_tool ${t.tool}`, SpanKind.INTERNAL, t.start, t.end, t.outcome === 'error' ? 'error' : null, { ...toolCallAttributes(t), ...(t.outcome === 'error' ? { 'error.type': 'tool_error' } : {}) });
    }
    span.end(start + latencyMs);
  }

  /** Sends what is queued, waiting at most `ms` (an unreachable collector must not hold shutdown). */
  async stop(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.provider.shutdown().catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}

const version = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The exporter SVC_OTLP_ENDPOINT asks for, or undefined: with it unset nothing is sent, whatever
 * OTEL_* variables say (the SDK is not even loaded into a provider). A malformed URL stops start-up.
 */
export function otlpFromEnv(env: NodeJS.ProcessEnv): OtlpExport | undefined {
  const endpoint = env.SVC_OTLP_ENDPOINT?.trim();
  if (!endpoint) return undefined;
  try {
    tracesUrl(endpoint);
  } catch {
    throw new Error('SVC_OTLP_ENDPOINT is not a URL (expected e.g. http://collector:4318)');
  }
  return new OtlpExport({ endpoint, headers: parseOtlpHeaders(env.SVC_OTLP_HEADERS), serviceVersion: version, delayMs: 1000, timeoutMs: 5000, maxQueue: 2048 });
}
