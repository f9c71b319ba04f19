import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** One exported span as decoded from OTLP/HTTP JSON. */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number };
  resource: Record<string, unknown>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}

function attrs(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

/**
 * A local OTLP/HTTP collector: accepts POST /v1/traces in the JSON encoding the exporter sends,
 * keeps the raw bodies and headers, and decodes the spans. `hang` makes it never answer.
 */
export class OtlpReceiver {
  readonly bodies: string[] = [];
  readonly headers: IncomingHttpHeaders[] = [];
  readonly spans: ReceivedSpan[] = [];
  hang = false;
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      this.bodies.push(text);
      this.headers.push(req.headers);
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        type Span = { name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes?: []; status?: { code?: number } };
        const body = JSON.parse(text) as { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Span[] }> }> };
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              this.spans.push({
                name: s.name, kind: s.kind, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', startTimeUnixNano: String(s.startTimeUnixNano), endTimeUnixNano: String(s.endTimeUnixNano),
                attributes: attrs(s.attributes), status: s.status ?? {}, resource: attrs(rs.resource?.attributes),
              });
            }
          }
        }
      }
      if (this.hang) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
