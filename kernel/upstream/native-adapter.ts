import { isGatewayError, type GatewayError } from '../errors/index.js';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../contracts/chat.js';
import type { ProviderCheckStatus } from '../contracts/catalog.js';
import type { ProviderAdapter, ProviderSettings, UpstreamCall, UpstreamTimeouts } from '../contracts/provider.js';
import { CallDeadline, closeUpstream, type CallSignal, readUpstreamText, startedWithFirst, upstreamEndpoint, type UpstreamBody, type UpstreamEndpoint } from './http.js';
import { streamInterrupted, transportFailureOf, upstreamUnavailable, type UpstreamErrorContext, type UpstreamFailure } from './failures.js';
import { serverSentEvents } from './sse.js';
import { jsonBody } from './json-body.js';

/** One HTTP request an adapter sends: path relative to the provider's address, headers, JSON body. */
export interface WireRequest {
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** What one stream event meant, as a translator reports it. */
export interface StreamStep {
  /** Chat Completions chunks to yield, in order (often none: pings, block ends). */
  chunks: ChatCompletionChunk[];
  /** A finish reason was reported: the reply is complete even if no end marker follows. */
  finished?: boolean;
  /** The vendor's own end marker (Anthropic `message_stop`). */
  ended?: boolean;
  /** An error event: the status it stands for and its body. */
  error?: { status: number; body: unknown };
  /** The event could not be read. */
  malformed?: boolean;
  /** Usage the vendor reported with this event (kept for an interruption's error); absent when it reported none. */
  usage?: Usage;
}

/** Turns one vendor stream, event by event, into Chat Completions chunks. Stateful: one per stream. */
export interface StreamTranslator {
  push(event: string, data: string): StreamStep;
}

/**
 * A vendor's wire format, for the generic adapter below: everything that differs between native
 * APIs (paths, auth headers, bodies, reply and event mapping, error bodies), as pure functions.
 */
export interface NativeWire {
  /** The call to send. `relaxed` is the second try after `relaxOn` matched the first refusal. */
  request(call: UpstreamCall, stream: boolean, relaxed: boolean): WireRequest;
  /** A refusal worth one more try in relaxed form (e.g. a sampling option the model no longer takes). */
  relaxOn?(status: number, text: string): boolean;
  /** The free list-models call of `check()`. */
  models(): WireRequest;
  /** Whether a list-models answer means the key was refused (401/403, Gemini's 400 API_KEY_INVALID). */
  keyRefused(status: number, text: string): boolean;
  /** An HTTP error answer (or an error event before the first chunk) as the spec's GatewayError. */
  error(status: number, headers: Record<string, string | string[] | undefined>, body: unknown, ctx: UpstreamErrorContext): GatewayError;
  /** A whole reply; a GatewayError when the body is an error in a 200; undefined when unreadable. */
  reply(json: unknown, ctx: UpstreamErrorContext): ChatCompletion | undefined;
  translator(): StreamTranslator;
}

/** The vendor's last usage report in a stream, and whether output arrived after it (then only its prompt count holds). */
interface ReportedUsage {
  usage: Usage;
  promptOnly: boolean;
}

/** Settings plus the pool size the providers plugin passes along. */
export type NativeSettings = ProviderSettings & { connections?: number };

/**
 * The deadlines of one call: the provider's, overridden by the call's own (its model's); the later
 * stages default to firstByteMs (providers/README.md "Deadlines").
 */
function deadlinesOf(settings: ProviderSettings, call: UpstreamCall) {
  const t: Partial<UpstreamTimeouts> = { ...settings.timeouts, ...call.deadlines };
  const firstByteMs = t.firstByteMs ?? settings.timeouts.firstByteMs;
  return { firstByteMs, firstTokenMs: t.firstTokenMs ?? firstByteMs, idleMs: t.idleMs ?? settings.timeouts.idleMs, totalMs: t.totalMs ?? firstByteMs };
}

/** Unreadable events in a row that end a stream; a single one is skipped. */
export const malformedInARow = 3;
const replyLimit = 64 * 1024 * 1024;
const errorLimit = 1024 * 1024;

/**
 * The generic adapter for a vendor whose native API is JSON over HTTP with SSE streams (Anthropic
 * Messages, Gemini generateContent): pooling, deadlines, cancellation and the stream rules of
 * providers/README.md, written once; the vendor folder supplies its `NativeWire`.
 *
 * @example
 * export default defineProvider({ vendor: 'anthropic', create: (s) => new NativeAdapter(s, anthropicWire(s)) });
 */
export class NativeAdapter implements ProviderAdapter {
  private readonly endpoint: UpstreamEndpoint;
  private closing: Promise<void> | undefined;

  constructor(private readonly settings: NativeSettings, private readonly wire: NativeWire) {
    this.endpoint = upstreamEndpoint(settings, settings.connections);
  }

  /** What error messages must never carry (the settings are fixed for the adapter's life: made once). */
  private secretsOf?: string[];

  private context(upstreamModel?: string): UpstreamErrorContext {
    const { url } = this.endpoint;
    const s = this.settings;
    const secrets = (this.secretsOf ??= [s.address, url?.origin ?? '', url?.host ?? '', url?.hostname ?? '', s.apiKey ?? '']);
    return upstreamModel === undefined ? { provider: s.name, secrets } : { provider: s.name, upstreamModel, secrets };
  }

  private async send(req: WireRequest, method: 'GET' | 'POST', signal: CallSignal) {
    const pool = this.endpoint.pool;
    if (!pool) throw new Error('invalid provider address');
    if (req.body === undefined) return pool.request({ path: `${this.endpoint.base}${req.path}`, method, headers: req.headers, signal });
    // A large body (attachments) is encoded a slice at a time, off the event loop's long turns.
    const { body, length } = await jsonBody(req.body);
    const headers = length === undefined ? req.headers : { ...req.headers, 'content-length': String(length) };
    return pool.request({ path: `${this.endpoint.base}${req.path}`, method, headers, body, signal });
  }

  /** Sends the call; a refusal the wire marks as relaxable is sent once more in relaxed form. */
  private async post(call: UpstreamCall, stream: boolean, signal: CallSignal, ctx: UpstreamErrorContext) {
    for (const relaxed of [false, true]) {
      const res = await this.send(this.wire.request(call, stream, relaxed), 'POST', signal);
      if (res.statusCode >= 200 && res.statusCode < 300) return res;
      const text = await readUpstreamText(res.body, errorLimit);
      if (relaxed || !this.wire.relaxOn?.(res.statusCode, text)) throw this.wire.error(res.statusCode, res.headers, text, ctx);
    }
    throw new Error('unreachable');
  }

  /** A thrown non-GatewayError as what it means: the client's own abort, or a provider failure. */
  private failure(err: unknown, call: UpstreamCall, deadline: CallDeadline, ctx: UpstreamErrorContext, started: boolean, usage?: ReportedUsage): unknown {
    if (isGatewayError(err)) return err;
    if (call.signal.aborted) return call.signal.reason ?? err;
    const why: UpstreamFailure = deadline.fired ?? (this.endpoint.pool ? transportFailureOf(err) : 'connect');
    return started ? streamInterrupted(ctx, why, usage?.usage, usage?.promptOnly) : upstreamUnavailable(ctx, why);
  }

  async complete(call: UpstreamCall): Promise<ChatCompletion> {
    const ctx = this.context(call.model.upstreamId);
    const deadline = new CallDeadline();
    deadline.arm(deadlinesOf(this.settings, call).totalMs, 'timeout');
    try {
      const res = await this.post(call, false, deadline.follow(call.signal), ctx);
      const text = await readUpstreamText(res.body, replyLimit);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw upstreamUnavailable(ctx, 'malformed');
      }
      const reply = this.wire.reply(json, ctx);
      if (!reply) throw upstreamUnavailable(ctx, 'malformed');
      return reply;
    } catch (err) {
      throw this.failure(err, call, deadline, ctx, false);
    } finally {
      deadline.clear();
    }
  }

  async stream(call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>> {
    const ctx = this.context(call.model.upstreamId);
    const limits = deadlinesOf(this.settings, call);
    const deadline = new CallDeadline();
    deadline.arm(limits.firstByteMs, 'timeout');
    let body: UpstreamBody;
    try {
      body = (await this.post(call, true, deadline.follow(call.signal), ctx)).body;
    } catch (err) {
      deadline.clear();
      throw this.failure(err, call, deadline, ctx, false);
    }
    deadline.arm(limits.firstTokenMs, 'timeout');
    return startedWithFirst(this.read(body, call, deadline, ctx));
  }

  /**
   * The stream rules: a finish reason or the vendor's end marker makes the reply complete (EOF
   * after it is fine); EOF before either is an interruption; one unreadable event is skipped,
   * `malformedInARow` in a row end the stream. Until the first chunk firstTokenMs runs; after it
   * any event (pings included) re-arms the idle timer.
   */
  private async *read(body: UpstreamBody, call: UpstreamCall, deadline: CallDeadline, ctx: UpstreamErrorContext): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const translator = this.wire.translator();
    const { idleMs } = deadlinesOf(this.settings, call);
    let started = false;
    let complete = false;
    // The vendor's last usage report; chunks after it that it did not count leave only its prompt count.
    let usage: ReportedUsage | undefined;
    let badRun = 0;
    try {
      for await (const ev of serverSentEvents(body as AsyncIterable<Buffer>)) {
        if (complete) continue; // drain to EOF so the keep-alive connection is reused
        if (started) deadline.arm(idleMs, 'idle');
        const step = translator.push(ev.event, ev.data);
        if (step.usage) usage = { usage: step.usage, promptOnly: false };
        else if (usage && step.chunks.length > 0) usage.promptOnly = true;
        badRun = step.malformed ? badRun + 1 : 0;
        if (step.malformed) call.onMalformed?.();
        if (badRun >= malformedInARow) throw started ? streamInterrupted(ctx, 'malformed', usage?.usage, usage?.promptOnly) : upstreamUnavailable(ctx, 'malformed');
        if (step.error) throw started ? streamInterrupted(ctx, 'error_event', usage?.usage, usage?.promptOnly) : this.wire.error(step.error.status, {}, step.error.body, ctx);
        for (const chunk of step.chunks) {
          if (!started) deadline.arm(idleMs, 'idle');
          started = true;
          yield chunk;
        }
        complete = !!(step.finished || step.ended);
      }
      if (!complete) throw started ? streamInterrupted(ctx, 'eof', usage?.usage, usage?.promptOnly) : upstreamUnavailable(ctx, 'eof');
    } catch (err) {
      if (complete) return; // the tail after the finish failed to arrive: the reply is whole
      throw this.failure(err, call, deadline, ctx, started, usage);
    } finally {
      if (complete) deadline.clear();
      else deadline.abort(); // consumer stopped early or the stream failed: free the upstream request
    }
  }

  async check(signal: AbortSignal): Promise<Exclude<ProviderCheckStatus, 'unchecked'>> {
    if (!this.endpoint.pool) return 'could_not_connect';
    const deadline = new CallDeadline();
    deadline.arm(this.settings.timeouts.connectMs + this.settings.timeouts.firstByteMs, 'timeout');
    try {
      const res = await this.send(this.wire.models(), 'GET', AbortSignal.any([signal, deadline.abortSignal]));
      const text = await readUpstreamText(res.body, errorLimit);
      // Any HTTP answer proves something listens at the address (SPEC "Provider check result").
      return this.wire.keyRefused(res.statusCode, text) ? 'key_refused' : 'connected';
    } catch {
      return 'could_not_connect';
    } finally {
      deadline.clear();
    }
  }

  close(graceMs = 5000): Promise<void> {
    this.closing ??= closeUpstream(this.endpoint.pool, graceMs);
    return this.closing;
  }
}
