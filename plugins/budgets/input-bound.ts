import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ChatMessage, ChatRequest, ContentPart, TokenCounter } from '../../kernel/index.js';

/** How the input bound is made; every number is documented in the README (hold accuracy). */
export interface BoundSettings {
  /** Added to the tokenizers' count for vendors whose tokenizers count more (25 = ×1.25). */
  marginPercent: number;
  /** Role markers and separators a vendor adds around each message. */
  messageOverheadTokens: number;
  /** Reply priming and the request's own framing. */
  requestOverheadTokens: number;
  /** One image at its largest billed size. */
  imageTokens: number;
  /** One PDF page (its text plus a page image, as vendors that read PDFs bill them). */
  pdfPageTokens: number;
  /** Texts longer than this are bounded by their UTF-8 size instead of being tokenized. */
  tokenizeMaxChars: number;
}

/** Specials such as `<|endoftext|>` are plain text in a prompt; never let them throw or count as one. */
const asText = { disallowedSpecial: new Set<string>() };

/**
 * Counted bounds of recent texts: a conversation resends its history every turn, so most texts
 * were bounded moments ago. A Map keeps insertion order, which makes it a small LRU.
 */
const recent = new Map<string, number>();
const recentMax = 4096;

/**
 * An upper bound of one text's tokens: the cl100k count plus the margin, and never less than one
 * token per four characters (the rough count used for a reply that broke off without usage).
 * cl100k rather than o200k: it counts more on emoji and non-Latin scripts (where o200k fell short
 * of it by up to ×1.96) and about the same on English and code, and it costs half the memory.
 * A text too long to tokenize on the request path is bounded by its UTF-8 size, which no
 * byte-level BPE tokenizer exceeds.
 */
export function textTokenBound(text: string, s: BoundSettings): number {
  if (text.length === 0) return 0;
  if (text.length > s.tokenizeMaxChars) return Buffer.byteLength(text, 'utf8');
  return Math.max(Math.ceil((textTokens(text) * (100 + s.marginPercent)) / 100), Math.ceil(text.length / 4));
}

/** The cl100k count of a text, without margin (cached like the bounds). */
export function textTokens(text: string): number {
  if (text.length === 0) return 0;
  let count = recent.get(text);
  if (count === undefined) {
    count = cl100k(text, asText);
    if (recent.size >= recentMax) recent.delete(recent.keys().next().value!);
  } else recent.delete(text);
  recent.set(text, count);
  return count;
}

const pageObject = /\/Type\s*\/Page(?![A-Za-z])/g;

/**
 * Pages of a PDF given as a base64 data URL: its page objects. Files that hide them in compressed
 * object streams count one page per 2 KB, a generous reading (the context window caps the total).
 */
export function pdfPages(dataUrl: string): number {
  const comma = dataUrl.indexOf(',');
  const bytes = Buffer.from(dataUrl.slice(comma + 1), 'base64');
  const found = bytes.toString('latin1').match(pageObject)?.length ?? 0;
  return found > 0 ? found : Math.max(1, Math.ceil(bytes.length / 2048));
}

type Count = (text: string, s: BoundSettings) => number;

function partBound(p: ContentPart, s: BoundSettings, count: Count): number {
  if (p.type === 'text') return count(p.text, s);
  if (p.type === 'image_url') return s.imageTokens;
  return p.file.file_data ? pdfPages(p.file.file_data) * s.pdfPageTokens : s.pdfPageTokens;
}

function messageBound(m: ChatMessage, s: BoundSettings, count: Count): number {
  let n = s.messageOverheadTokens + count(m.name ?? '', s);
  if (typeof m.content === 'string') n += count(m.content, s);
  else if (Array.isArray(m.content)) for (const p of m.content) n += partBound(p, s, count);
  for (const c of m.tool_calls ?? []) n += count(c.function.name, s) + count(c.function.arguments, s) + s.messageOverheadTokens;
  if (m.tool_call_id) n += count(m.tool_call_id, s);
  return n;
}

/**
 * An upper bound of the input tokens any vendor bills for the request (before the model's context
 * window caps it): messages, tool definitions, attachments and framing.
 *
 * @example
 * inputTokenBound({ model: 'x:y', messages: [{ role: 'user', content: 'hi' }], stream: false, includeUsage: false }, settings)
 */
export function inputTokenBound(chat: Pick<ChatRequest, 'messages' | 'tools'>, s: BoundSettings, count: Count = textTokenBound): number {
  let n = s.requestOverheadTokens;
  for (const m of chat.messages) n += messageBound(m, s, count);
  if (chat.tools?.length) n += count(JSON.stringify(chat.tools), s);
  return n;
}

/**
 * The shared tokenizer (kernel `TokenCounterToken`): the same counts without the margin or the
 * four-characters floor, for the context-window check and a broken-off reply's output.
 */
export function tokenCounter(s: BoundSettings): TokenCounter {
  return { text: textTokens, input: (chat) => inputTokenBound(chat, s, (t) => textTokens(t)) };
}
