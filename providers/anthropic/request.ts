import { argumentsObject, dataUrl, fileAsText, plainText, splitInstructions, type ChatMessage, type ContentPart, type UpstreamCall } from '../../kernel/index.js';

/**
 * ChatRequest → Anthropic Messages request body (API version 2023-06-01; see README.md). Pure.
 * System and developer messages become `system`; tool calls become `tool_use` blocks with their
 * ids kept; `tool` messages become `tool_result` blocks in a user turn (Anthropic merges
 * consecutive user turns); images and PDFs become base64 `image` / `document` blocks.
 */

type Json = Record<string, unknown>;

function block(p: ContentPart): Json {
  if (p.type === 'text') return { type: 'text', text: p.text };
  if (p.type === 'image_url') {
    const d = dataUrl(p.image_url.url);
    return d ? { type: 'image', source: { type: 'base64', media_type: d.mimeType, data: d.data } } : { type: 'image', source: { type: 'url', url: p.image_url.url } };
  }
  const d = dataUrl(p.file.file_data);
  if (d?.mimeType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: d.mimeType, data: d.data } };
  return { type: 'text', text: fileAsText(p) };
}

/** Message content as blocks; empty text blocks are dropped (Anthropic refuses them). */
function blocks(content: ChatMessage['content']): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content ?? []).map(block).filter((b) => !(b.type === 'text' && b.text === ''));
}

function turn(m: ChatMessage): Json {
  if (m.role === 'tool') {
    return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: plainText(m.content) }] };
  }
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => ({ type: 'tool_use', id: t.id, name: t.function.name, input: argumentsObject(t.function.arguments) }));
    return { role: 'assistant', content: [...blocks(m.content), ...calls] };
  }
  const content = blocks(m.content);
  return { role: 'user', content: content.length > 0 ? content : [{ type: 'text', text: ' ' }] };
}

/** Stop sequences Anthropic accepts: at least one non-whitespace character each. */
function stopSequences(stop: string | string[] | undefined): string[] | undefined {
  const list = (typeof stop === 'string' ? [stop] : (stop ?? [])).filter((s) => s.trim() !== '');
  return list.length > 0 ? list : undefined;
}

/**
 * The request body. `relaxed` (the second try after a model refused a sampling option) sends no
 * temperature or top_p at all.
 *
 * @example
 * toAnthropicRequest(call, true, false) // { model, max_tokens, system?, messages, stream: true, … }
 */
export function toAnthropicRequest(call: Pick<UpstreamCall, 'model' | 'request'>, stream: boolean, relaxed = false): Json {
  const r = call.request;
  const { instructions, turns } = splitInstructions(r.messages);
  const body: Json = { model: call.model.upstreamId, max_tokens: r.maxTokens };
  if (instructions) body.system = instructions;
  // An assistant turn with neither text nor tool calls (a reply stopped for an approval, stored as
  // history) is refused by Anthropic ("non-empty content"): it says nothing, so it is left out.
  body.messages = turns.map(turn).filter((t) => !(t.role === 'assistant' && (t.content as Json[]).length === 0));
  // Current models refuse temperature together with top_p: send one, temperature first.
  // Anthropic's range is 0–1 where Chat Completions allows 0–2, so higher values are capped.
  if (!relaxed && r.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, r.temperature));
  else if (!relaxed && r.top_p !== undefined) body.top_p = r.top_p;
  const stops = stopSequences(r.stop);
  if (stops) body.stop_sequences = stops;
  if (r.tools && r.tools.length > 0) {
    body.tools = r.tools.map((t) => {
      const tool: Json = { name: t.function.name, input_schema: t.function.parameters ?? { type: 'object', properties: {} } };
      if (t.function.description) tool.description = t.function.description;
      return tool;
    });
    if (r.tool_choice) body.tool_choice = { type: r.tool_choice };
  }
  if (stream) body.stream = true;
  return body;
}
