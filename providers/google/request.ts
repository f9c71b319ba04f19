import { argumentsObject, dataUrl, fileAsText, plainText, splitInstructions, type ChatMessage, type ContentPart, type UpstreamCall } from '../../kernel/index.js';
import { geminiJsonSchema } from './schema.js';
import { readToolCallId } from './tool-ids.js';

/**
 * ChatRequest → Gemini `generateContent` request body (pure). System and developer messages
 * become `systemInstruction`; assistant turns are role `model`; tool calls become `functionCall`
 * parts carrying back their `thoughtSignature` from the id (tool-ids.ts); consecutive `tool`
 * messages become one user content of `functionResponse` parts, named after the call they
 * answer; images and PDFs are `inlineData`.
 */

type Json = Record<string, unknown>;

function part(p: ContentPart): Json {
  if (p.type === 'text') return { text: p.text };
  if (p.type === 'image_url') {
    const d = dataUrl(p.image_url.url);
    return d ? { inlineData: { mimeType: d.mimeType, data: d.data } } : { fileData: { fileUri: p.image_url.url } };
  }
  const d = dataUrl(p.file.file_data);
  return d?.mimeType === 'application/pdf' ? { inlineData: { mimeType: d.mimeType, data: d.data } } : { text: fileAsText(p) };
}

function parts(content: ChatMessage['content']): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return (content ?? []).map(part).filter((p) => p.text !== '');
}

/** A tool result as Gemini's `response` object: a JSON object as is, anything else under `content`. */
function response(text: string): Json {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
  } catch {
    // plain text result
  }
  return { content: text };
}

function contents(turns: ChatMessage[]): Json[] {
  const names = new Map<string, string>();
  const out: Json[] = [];
  for (const m of turns) {
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((t) => {
        names.set(t.id, t.function.name);
        const { vendorId, signature } = readToolCallId(t.id);
        const functionCall: Json = { name: t.function.name, args: argumentsObject(t.function.arguments) };
        if (vendorId) functionCall.id = vendorId;
        return signature ? { functionCall, thoughtSignature: signature } : { functionCall };
      });
      // A turn with neither text nor calls (a reply stopped for an approval) says nothing; Gemini refuses empty parts.
      const said = [...parts(m.content), ...calls];
      if (said.length > 0) out.push({ role: 'model', parts: said });
    } else if (m.role === 'tool') {
      const id = m.tool_call_id ?? '';
      const functionResponse: Json = { name: names.get(id) ?? '', response: response(plainText(m.content)) };
      const { vendorId } = readToolCallId(id);
      if (vendorId) functionResponse.id = vendorId;
      const last = out.at(-1);
      // Parallel results go back together: one content with a response part per call.
      if (last?.role === 'user' && (last.parts as Json[]).every((p) => p.functionResponse)) (last.parts as Json[]).push({ functionResponse });
      else out.push({ role: 'user', parts: [{ functionResponse }] });
    } else {
      const p = parts(m.content);
      out.push({ role: 'user', parts: p.length > 0 ? p : [{ text: ' ' }] });
    }
  }
  return out;
}

/**
 * The request body (the model and stream choice go in the URL, not here).
 *
 * @example
 * toGeminiRequest(call) // { contents, systemInstruction?, tools: [{ functionDeclarations: [{ name, parametersJsonSchema }] }]?, toolConfig?, generationConfig }
 */
export function toGeminiRequest(call: Pick<UpstreamCall, 'request'>): Json {
  const r = call.request;
  const { instructions, turns } = splitInstructions(r.messages);
  const body: Json = { contents: contents(turns) };
  if (instructions) body.systemInstruction = { parts: [{ text: instructions }] };
  if (r.tools && r.tools.length > 0) {
    const functionDeclarations = r.tools.map((t) => {
      const fn: Json = { name: t.function.name };
      if (t.function.description) fn.description = t.function.description;
      const schema = geminiJsonSchema(t.function.parameters);
      if (schema) fn.parametersJsonSchema = schema;
      return fn;
    });
    body.tools = [{ functionDeclarations }];
    if (r.tool_choice) body.toolConfig = { functionCallingConfig: { mode: r.tool_choice === 'none' ? 'NONE' : 'AUTO' } };
  }
  const generationConfig: Json = { maxOutputTokens: r.maxTokens };
  if (r.temperature !== undefined) generationConfig.temperature = r.temperature;
  if (r.top_p !== undefined) generationConfig.topP = r.top_p;
  const stops = typeof r.stop === 'string' ? [r.stop] : r.stop;
  if (stops && stops.length > 0) generationConfig.stopSequences = stops;
  body.generationConfig = generationConfig;
  return body;
}
