/**
 * The Chat Completions wire types the service reads and writes (a subset of
 * shared/data/openai-openapi.yaml: CreateChatCompletionRequest/Response/StreamResponse). Only
 * fields the spec accepts are typed; unknown request fields are dropped during validation.
 */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart { type: 'text'; text: string }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
export interface FilePart { type: 'file'; file: { filename?: string; file_data?: string } }
export type ContentPart = TextPart | ImagePart | FilePart;

export interface ToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }

export interface ChatMessage {
  role: ChatRole;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** A validated request, with only the fields the service forwards. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  /** max_tokens or max_completion_tokens as the client sent it; undefined when neither was set. */
  maxTokens?: number;
  /** Which field set maxTokens, so a refusal names the one the client sent. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  tools?: ToolDefinition[];
  tool_choice?: 'auto' | 'none';
}

/**
 * What the request carries that a model must be declared able to read, and the pages of its PDFs
 * (counted once, while validation has the decoded bytes, so pricing never decodes them again).
 */
export interface RequestNeeds { images: number; pdfs: number; tools: boolean; attachmentBytes: number; pdfPages?: number }

const pageObject = /\/Type\s*\/Page(?![A-Za-z])/g;

/**
 * Pages of a PDF: its page objects. Files that hide them in compressed object streams count one
 * page per 2 KB, a generous reading (the context window caps the total).
 *
 * @example
 * pdfPageCount(Buffer.from('%PDF-1.4 /Type /Page /Type /Page')) // 2
 */
export function pdfPageCount(bytes: Buffer): number {
  const found = bytes.toString('latin1').match(pageObject)?.length ?? 0;
  return found > 0 ? found : Math.max(1, Math.ceil(bytes.length / 2048));
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; refusal?: string | null; tool_calls?: ToolCall[] };
    finish_reason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | null;
    logprobs: null;
  }>;
  usage?: Usage;
  system_fingerprint?: string;
  [extra: string]: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; refusal?: string | null; tool_calls?: Array<Partial<ToolCall> & { index: number }> };
    finish_reason: ChatCompletion['choices'][number]['finish_reason'];
    logprobs?: null;
  }>;
  usage?: Usage | null;
  [extra: string]: unknown;
}
