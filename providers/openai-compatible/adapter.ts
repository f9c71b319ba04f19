import { closeUpstream, GatewayError, isGatewayError, jsonBody, malformedInARow, readUpstreamText, UpstreamPool, type ChatCompletion, type ChatCompletionChunk, type ProviderAdapter, type UpstreamBody, type UpstreamResponse, type CallSignal, type JsonBody, type PreparedHead } from '../../kernel/index.js';
import type { ProviderCheckStatus, ProviderSettings, UpstreamCall, Usage } from '../../kernel/index.js';
import { fromVendorReply, readStreamEvent, toVendorRequest, type StreamItem } from './transform.js';
import { SseDecoder } from './sse.js';
import { UsageTail } from './usage-tail.js';
import type { VendorQuirks } from './quirks.js';
import { fromVendorError, interrupted, parseVendorError, transportFailure, unavailable, type ErrorContext, type Failure } from './errors.js';
import { callDeadlines, Deadline, wholeReplyMs, type CallDeadlines } from './deadline.js';

/** Settings plus the pool size the providers plugin passes along (not part of the kernel contract). */
export interface AdapterSettings extends ProviderSettings {
  /** Keep-alive connections to this provider (default 128). */
  connections?: number;
  /** A built-in vendor's fixes to the Chat Completions steps (providers/openai-compatible/quirks.ts). */
  quirks?: VendorQuirks;
}

type Body = UpstreamBody;
const replyLimit = 64 * 1024 * 1024;
const errorLimit = 1024 * 1024;

function target(address: string): URL | undefined {
  const url = URL.canParse(address) ? new URL(address) : undefined;
  return url?.protocol === 'http:' || url?.protocol === 'https:' ? url : undefined;
}

/**
 * The adapter for any Chat-Completions-compatible server (ARCHITECTURE.md §6): one UpstreamPool per
 * provider with keep-alive connections. `connectMs` bounds connecting; a stream's `firstByteMs` the
 * wait for the response headers, `firstTokenMs` the wait for its first chunk, `idleMs` each gap;
 * a whole reply's `totalMs` the whole exchange. The call's signal aborts the upstream request, so a
 * client that leaves frees the slot.
 */
export class OpenAICompatibleAdapter implements ProviderAdapter {
  private readonly url: URL | undefined;
  private readonly pool: UpstreamPool | undefined;
  private readonly base: string;
  private closing: Promise<void> | undefined;

  constructor(private readonly settings: AdapterSettings) {
    this.url = target(settings.address);
    this.base = (this.url?.pathname ?? '').replace(/\/+$/, '');
    const t = settings.timeouts;
    // The call's own timers apply each deadline (a model may lengthen them); the pool has none.
    this.pool = this.url ? new UpstreamPool(this.url, { connections: settings.connections ?? 128, connectTimeout: t.connectMs }) : undefined;
  }

  /** The chat call's path and its request line and headers, whole and streamed, made once (only the body changes). */
  private chatHeads?: { path: string; whole: PreparedHead; stream: PreparedHead };

  /** What error messages must never carry (the settings are fixed for the adapter's life: made once). */
  private secretsOf?: string[];

  private context(upstreamModel?: string): ErrorContext {
    const s = this.settings;
    const secrets = (this.secretsOf ??= [s.address, this.url?.origin ?? '', this.url?.host ?? '', this.url?.hostname ?? '', s.apiKey ?? '']);
    return upstreamModel === undefined ? { provider: s.name, secrets } : { provider: s.name, upstreamModel, secrets };
  }

  private headers(accept: string, json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept };
    if (json) h['content-type'] = 'application/json';
    if (this.settings.apiKey) h.authorization = `Bearer ${this.settings.apiKey}`;
    return h;
  }

  private body(call: Pick<UpstreamCall, 'model' | 'request'>): Record<string, unknown> {
    return this.settings.quirks?.request ? this.settings.quirks.request(call) : toVendorRequest(call);
  }

  private vendorError(status: number, headers: UpstreamResponse['headers'], body: unknown, ctx: ErrorContext): ReturnType<typeof fromVendorError> {
    return this.settings.quirks?.error ? this.settings.quirks.error(status, headers, body, ctx) : fromVendorError(status, headers, body, ctx);
  }

  /** Not async: a body without big strings is encoded at once (json-body.ts), so no frame waits for it. */
  private post(value: unknown, stream: boolean, signal: CallSignal): Promise<UpstreamResponse> {
    if (!this.pool) return Promise.reject(new Error('invalid provider address'));
    // A large body (attachments) is encoded a slice at a time, off the event loop's long turns.
    const encoded = jsonBody(value);
    return encoded instanceof Promise ? encoded.then((e) => this.send(e, stream, signal)) : this.send(encoded, stream, signal);
  }

  private send({ body, length }: JsonBody, stream: boolean, signal: CallSignal): Promise<UpstreamResponse> {
    const pool = this.pool!;
    const heads = (this.chatHeads ??= this.prepareChat(pool));
    return pool.request({ path: heads.path, method: 'POST', prepared: stream ? heads.stream : heads.whole, body, length, signal });
  }

  private prepareChat(pool: UpstreamPool): { path: string; whole: PreparedHead; stream: PreparedHead } {
    const path = `${this.base}/chat/completions`;
    return { path, whole: pool.prepare('POST', path, this.headers('application/json', true)), stream: pool.prepare('POST', path, this.headers('text/event-stream', true)) };
  }

  /** A thrown non-GatewayError as what it means: the client's own abort, or a provider failure. */
  private failure(err: unknown, call: UpstreamCall, deadline: Deadline, ctx: ErrorContext, started: boolean, usage?: Usage, promptOnly = false): unknown {
    if (call.signal.aborted) return call.signal.reason ?? err;
    const why: Failure = deadline.fired ?? (this.pool ? transportFailure(err) : 'connect');
    return started ? interrupted(ctx, why, usage, promptOnly) : unavailable(ctx, why);
  }

  async complete(call: UpstreamCall): Promise<ChatCompletion> {
    // The errors' context (this.context) is made for an error only: an object per call before.
    const deadline = new Deadline();
    deadline.arm(wholeReplyMs(this.settings.timeouts, call), 'timeout');
    try {
      const body = this.body(call.request.stream ? { model: call.model, request: { ...call.request, stream: false } } : call);
      const res = await this.post(body, false, deadline.follow(call.signal));
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const text = await readUpstreamText(res.body, ok ? replyLimit : errorLimit);
      if (!ok) throw this.vendorError(res.statusCode, res.headers, text, this.context(call.model.upstreamId));
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw unavailable(this.context(call.model.upstreamId), 'malformed');
      }
      const reply = this.settings.quirks?.reply ? this.settings.quirks.reply(json) : fromVendorReply(json);
      if (reply) return reply;
      const e = parseVendorError(json);
      throw e.message ? this.vendorError(e.status ?? 502, res.headers, json, this.context(call.model.upstreamId)) : unavailable(this.context(call.model.upstreamId), 'malformed');
    } catch (err) {
      throw isGatewayError(err) ? err : this.failure(err, call, deadline, this.context(call.model.upstreamId), false);
    } finally {
      deadline.clear();
    }
  }

  async stream(call: UpstreamCall): Promise<AsyncIterable<ChatCompletionChunk>> {
    const ctx = this.context(call.model.upstreamId);
    const limits = callDeadlines(this.settings.timeouts, call);
    const deadline = new Deadline();
    deadline.arm(limits.firstByteMs, 'timeout');
    let res: UpstreamResponse;
    try {
      const body = this.body(call.request.stream ? call : { model: call.model, request: { ...call.request, stream: true } });
      res = await this.post(body, true, deadline.follow(call.signal));
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const text = await readUpstreamText(res.body, errorLimit);
        throw this.vendorError(res.statusCode, res.headers, text, ctx);
      }
    } catch (err) {
      deadline.clear();
      throw isGatewayError(err) ? err : this.failure(err, call, deadline, ctx, false);
    }
    // Wait for the first event, so an error before any chunk is still an ordinary error the
    // dispatcher may retry or fall back on (SPEC "Streamed reply": not started).
    deadline.arm(limits.firstTokenMs, 'timeout');
    const chunks = this.read(res.body, call, deadline, ctx, limits);
    let first: IteratorResult<ChatCompletionChunk> | undefined = await chunks.next();
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          const f = first;
          first = undefined;
          return f ? Promise.resolve(f) : chunks.next();
        },
        return: async () => {
          first = undefined;
          return chunks.return(undefined);
        },
      }),
    };
  }

  /**
   * The stream rules every adapter follows (providers/README.md): `[DONE]` ends it; so does the end
   * of the body (or a reset, or silence) after a finish reason. A single unparsable event is skipped
   * and reported through `call.onMalformed`; `malformedInARow` of them break the stream.
   */
  private async *read(body: Body, call: UpstreamCall, deadline: Deadline, ctx: ErrorContext, limits: CallDeadlines): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const sse = new SseDecoder();
    let started = false;
    let done = false;
    let finished = false;
    let badRun = 0;
    let usage: Usage | undefined;
    // Output after the vendor's last usage report is not in its counts: only the prompt count holds then.
    let promptOnly = false;
    const tail = new UsageTail();
    const owed = function* (): Generator<ChatCompletionChunk> {
      const last = tail.end();
      if (last) yield last;
    };
    const broke = (why: Failure) => (started ? interrupted(ctx, why, usage, promptOnly) : unavailable(ctx, why));
    const handle = (item: StreamItem): ChatCompletionChunk | undefined => {
      if (item.kind === 'done') done = true;
      else if (item.kind === 'malformed') {
        call.onMalformed?.();
        if (++badRun >= malformedInARow) throw broke('malformed');
      } else if (item.kind === 'error') {
        throw started ? interrupted(ctx, 'error_event', usage, promptOnly) : this.vendorError(parseVendorError(item.body).status ?? 502, {}, item.body, ctx);
      } else {
        badRun = 0;
        return item.chunk;
      }
      return undefined;
    };
    try {
      const quirk = this.settings.quirks?.streamEvent;
      const state: Record<string, unknown> = {};
      const read = (ev: { event: string; data: string }): StreamItem[] => {
        const item = quirk ? quirk(ev.event, ev.data, state) : readStreamEvent(ev.event, ev.data);
        return item ? [item] : [];
      };
      const events = async function* (): AsyncGenerator<StreamItem> {
        for await (const buf of body as AsyncIterable<Buffer>) for (const ev of sse.push(buf)) yield* read(ev);
        for (const ev of sse.end()) yield* read(ev);
      };
      for await (const item of events()) {
        if (done) continue; // drain to EOF after [DONE] so the keep-alive connection is reused
        const chunk = handle(item);
        if (done) yield* owed();
        if (!chunk) continue;
        if (chunk.usage) [usage, promptOnly] = [chunk.usage, false];
        else if (usage && chunk.choices.length > 0) promptOnly = true;
        if (chunk.choices.some((c) => c.finish_reason !== null)) finished = true;
        started = true;
        deadline.arm(limits.idleMs, 'idle');
        yield tail.pass(chunk);
      }
      if (!done && !finished) throw broke('eof');
      done = true;
      yield* owed();
    } catch (err) {
      // After [DONE], or after a finish reason, whatever fails to arrive (usage, the end marker) is not part of the reply.
      if (done || (finished && !call.signal.aborted)) {
        yield* owed();
        return;
      }
      throw isGatewayError(err) ? err : this.failure(err, call, deadline, ctx, started, usage, promptOnly);
    } finally {
      if (done) deadline.clear();
      else deadline.abort(); // consumer stopped early, the stream failed or ended quietly: free the upstream request
    }
  }

  async check(signal: AbortSignal): Promise<Exclude<ProviderCheckStatus, 'unchecked'>> {
    if (!this.pool) return 'could_not_connect';
    const deadline = new Deadline();
    deadline.arm(this.settings.timeouts.connectMs + this.settings.timeouts.firstByteMs, 'timeout');
    try {
      const check = this.settings.quirks?.check;
      const res = await this.pool.request({
        path: `${this.base}${check?.path ?? '/models'}`,
        method: 'GET',
        headers: this.headers('application/json', false),
        signal: AbortSignal.any([signal, deadline.abortSignal]),
      });
      if (check?.refused) return check.refused(res.statusCode, await readUpstreamText(res.body, errorLimit)) ? 'key_refused' : 'connected';
      await readUpstreamText(res.body, errorLimit).catch(() => undefined);
      // Any HTTP answer proves something listens at the address (SPEC "Provider check result").
      return res.statusCode === 401 || res.statusCode === 403 ? 'key_refused' : 'connected';
    } catch {
      return 'could_not_connect';
    } finally {
      deadline.clear();
    }
  }

  /** GET <base>/models: the `data[].id` of an OpenAI-style list (at most 1 MB, 5,000 ids). */
  async listModels(signal: AbortSignal): Promise<string[]> {
    if (!this.pool) throw new GatewayError('upstream_unavailable', `Provider ${this.settings.name} could not be reached.`);
    const deadline = new Deadline();
    deadline.arm(this.settings.timeouts.connectMs + this.settings.timeouts.firstByteMs, 'timeout');
    try {
      const res = await this.pool.request({ path: `${this.base}/models`, method: 'GET', headers: this.headers('application/json', false), signal: AbortSignal.any([signal, deadline.abortSignal]) });
      const text = await readUpstreamText(res.body, errorLimit);
      if (res.statusCode === 401 || res.statusCode === 403) throw new GatewayError('provider_auth_failed', `Provider ${this.settings.name} refused the key.`);
      if (res.statusCode >= 300) throw new GatewayError('upstream_unavailable', `Provider ${this.settings.name} answered ${res.statusCode} to its model list.`);
      const data = (JSON.parse(text) as { data?: Array<{ id?: unknown }> }).data;
      if (!Array.isArray(data)) throw new GatewayError('upstream_unavailable', `Provider ${this.settings.name} sent no model list.`);
      return data.map((m) => m?.id).filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 300).slice(0, 5000);
    } catch (err) {
      if (isGatewayError(err)) throw err;
      throw new GatewayError('upstream_unavailable', `Provider ${this.settings.name} could not be reached for its model list.`);
    } finally {
      deadline.clear();
    }
  }

  /** Lets in-flight calls finish for a few seconds, then drops the pool's connections. */
  close(graceMs = 5000): Promise<void> {
    this.closing ??= closeUpstream(this.pool, graceMs);
    return this.closing;
  }
}
