import { pdfPageCount, type ChatMessage, type ChatRequest, type ContentPart, type InputMeasure, type RequestNeeds, type TokenCounter } from '../../kernel/index.js';
import { countText, type TextCount } from './token-count.js';

/** How the input bound is made; every number is documented in the README (hold accuracy). */
export interface BoundSettings {
  /** Added to the tokenizer's count for vendors whose tokenizers count more (25 = ×1.25). */
  marginPercent: number;
  /** Role markers and separators a vendor adds around each message. */
  messageOverheadTokens: number;
  /** Reply priming and the request's own framing. */
  requestOverheadTokens: number;
  /** One image at its largest billed size. */
  imageTokens: number;
  /** One PDF page (its text plus a page image, as vendors that read PDFs bill them). */
  pdfPageTokens: number;
  /**
   * Characters tokenized per request (texts counted before cost nothing): the rest of a request
   * is bounded by its UTF-8 size, so no request costs more tokenizer work than this.
   */
  tokenizeMaxChars: number;
}

/** Pages of a PDF part given as a base64 data URL, once per part object (a tool loop prices it again). */
const pdfPagesOf = new WeakMap<object, number>();

/**
 * Pages of a PDF given as a base64 data URL (validation counts them once into `needs.pdfPages`;
 * this is for requests priced without it, such as a tool loop's grown message list).
 */
export function pdfPages(dataUrl: string): number {
  return pdfPageCount(Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64'));
}

function partPages(p: Extract<ContentPart, { type: 'file' }>): number {
  let n = pdfPagesOf.get(p);
  if (n === undefined) pdfPagesOf.set(p, (n = p.file.file_data ? pdfPages(p.file.file_data) : 1));
  return n;
}

/** Sums one request's texts under its tokenizing budget. */
class Tally {
  lower: number;
  tokens: number;
  bound: number;
  private budget: number;

  constructor(private readonly s: BoundSettings) {
    this.budget = s.tokenizeMaxChars;
    // Every message format spends at least a token on the reply's priming: framing counts in
    // `tokens` and `bound`, never in `lower` (it is a vendor's, not certain).
    this.lower = 0;
    this.tokens = this.bound = s.requestOverheadTokens;
  }

  text(t: string): void {
    if (t.length === 0) return;
    const c: TextCount = countText(t, this.budget);
    this.budget -= c.work;
    this.lower += c.lower;
    this.tokens += c.tokens;
    // A size bound already exceeds any count; a count gets its slack, the margin and the
    // four-characters floor.
    this.bound += c.bySize ? c.tokens : Math.max(Math.ceil(((c.tokens + c.slack) * (100 + this.s.marginPercent)) / 100), Math.ceil(t.length / 4));
  }

  framing(n: number): void {
    this.tokens += n;
    this.bound += n;
  }

  message(m: ChatMessage, pdfPagesKnown: boolean): void {
    this.lower += 1; // a message holds at least its role's token in every format
    this.framing(this.s.messageOverheadTokens);
    this.text(m.name ?? '');
    if (typeof m.content === 'string') this.text(m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (p.type === 'text') this.text(p.text);
        else if (p.type === 'image_url') this.framing(this.s.imageTokens);
        else if (!pdfPagesKnown) this.framing(partPages(p) * this.s.pdfPageTokens);
      }
    }
    for (const c of m.tool_calls ?? []) {
      this.text(c.function.name);
      this.text(c.function.arguments);
      this.framing(this.s.messageOverheadTokens);
    }
    if (m.tool_call_id) this.text(m.tool_call_id);
  }
}

/** One measure per message list (and tool list): every phase that asks gets the same figures. */
const measured = new WeakMap<ChatMessage[], { tools: unknown; m: InputMeasure }>();

/**
 * What is known of a request's input tokens (README "Hold accuracy"): a certain lower bound (for
 * the context check, no framing), the count (exact where tokenized, one token per byte where
 * bounded by size), and the hold's upper bound with margin. Linear in the request's size, with at
 * most `tokenizeMaxChars` characters tokenized; `needs.pdfPages`, when validation counted them,
 * spares decoding the PDFs again.
 *
 * @example
 * measureInput({ messages: [{ role: 'user', content: 'hi' }] }, settings).bound
 */
export function measureInput(chat: Pick<ChatRequest, 'messages' | 'tools'>, s: BoundSettings, needs?: RequestNeeds): InputMeasure {
  const known = measured.get(chat.messages);
  if (known && known.tools === chat.tools) return known.m;
  const t = new Tally(s);
  const pdfPagesKnown = needs?.pdfPages !== undefined;
  if (pdfPagesKnown) t.framing(needs!.pdfPages! * s.pdfPageTokens);
  for (const m of chat.messages) t.message(m, pdfPagesKnown);
  if (chat.tools?.length) t.text(JSON.stringify(chat.tools));
  const m: InputMeasure = { lower: t.lower, tokens: t.tokens, bound: t.bound };
  measured.set(chat.messages, { tools: chat.tools, m });
  return m;
}

/**
 * An upper bound of the input tokens any vendor bills for the request (before the model's context
 * window caps it): messages, tool definitions, attachments and framing.
 *
 * @example
 * inputTokenBound({ messages: [{ role: 'user', content: 'hi' }] }, settings)
 */
export function inputTokenBound(chat: Pick<ChatRequest, 'messages' | 'tools'>, s: BoundSettings, needs?: RequestNeeds): number {
  return measureInput(chat, s, needs).bound;
}

/** One text's bound alone (with a fresh budget): the count with margin, or its UTF-8 size. */
export function textTokenBound(text: string, s: BoundSettings): number {
  const t = new Tally({ ...s, requestOverheadTokens: 0 });
  t.text(text);
  return t.bound;
}

/** Characters tokenized for one reply's text (a broken-off reply's output); the rest by size. */
const outputBudget = 64_000;

/**
 * The shared tokenizer (kernel `TokenCounterToken`): the same counts without the margin, for the
 * context-window check and a broken-off reply's output.
 */
export function tokenCounter(s: BoundSettings): TokenCounter {
  return {
    text: (t) => countText(t, outputBudget).tokens,
    input: (chat) => measureInput(chat, s).tokens,
    measure: (chat, needs) => measureInput(chat, s, needs),
  };
}
