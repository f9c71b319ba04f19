/**
 * Request bodies shaped to be expensive for a gateway (issue 25): valid Chat Completions requests
 * up to the 32 MB body limit whose content is the worst case for some per-request step (token
 * counting, JSON parsing, validation, attachment decoding). Each is built once, as bytes.
 */

const MB = 1024 * 1024;

/** One hostile request shape: what it is and its body for a given model. */
export interface HostileShape {
  id: string;
  /** What the body holds, in words (printed beside the figures). */
  what: string;
  body(model: string): Buffer;
}

/** Just under the body limit (32 MB), leaving room for the JSON around the content. */
const nearLimit = 31 * MB;

const json = (model: string, rest: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify({ model, max_tokens: 16, ...rest }));
const user = (content: unknown) => ({ role: 'user', content });

/** A base64 `data:` URL of `bytes` bytes of a file of the given type (its first bytes are the real magic). */
function dataUrl(mime: string, bytes: number, head: Buffer): string {
  const b = Buffer.alloc(bytes, 0x41);
  head.copy(b, 0);
  return `data:${mime};base64,${b.toString('base64')}`;
}

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const pdfHead = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n');

/** CJK text without spaces or punctuation: one pre-token to a BPE tokenizer. */
function cjk(chars: number): string {
  const pool = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
  let out = '';
  for (let i = 0; out.length < chars; i++) out += pool[(i * 7919) % pool.length];
  return out;
}

/** `depth` nested arrays: `[[[…]]]`. */
const brackets = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/**
 * The shapes the hostile bench sends, each an authenticated request to a model with a 128,000-token
 * context window. Sizes are chosen to be the worst a key holder can send within the limits.
 */
export const hostileShapes: HostileShape[] = [
  { id: 'baseline', what: 'one ordinary "hello" (the noise floor of the machine and the probe)', body: (m) => json(m, { messages: [user('hello there')] }) },
  { id: 'run-200k', what: 'one user message: 200,000 × "a" (the issue\'s 10 s block)', body: (m) => json(m, { messages: [user('a'.repeat(200_000))] }) },
  { id: 'run-31mb', what: 'one user message: 31 MiB × "a"', body: (m) => json(m, { messages: [user('a'.repeat(nearLimit))] }) },
  { id: 'run-500k-fits', what: 'one user message: 500,000 × "a" in words of 50 (fits the window)', body: (m) => json(m, { messages: [user(('a'.repeat(49) + ' ').repeat(10_000))] }) },
  {
    id: 'tool-args-brackets',
    what: 'assistant tool call whose arguments are 1 MiB of "[" (and a tool reply)',
    body: (m) =>
      json(m, {
        messages: [
          user('call it'),
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '['.repeat(MB) } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'ok' },
          user('and now?'),
        ],
      }),
  },
  { id: 'deep-brackets', what: 'an ignored field nesting 10 M arrays deep (20 MiB of brackets)', body: (m) => Buffer.from(`{"model":${JSON.stringify(m)},"max_tokens":16,"messages":[{"role":"user","content":"hi"}],"metadata_x":${brackets(10_000_000)}}`) },
  { id: 'many-messages', what: '1,000,000 tiny user messages (~29 MiB)', body: (m) => json(m, { messages: Array.from({ length: 1_000_000 }, () => user('a')) }) },
  {
    id: 'many-tools',
    what: '100,000 tools with small schemas (~12 MiB)',
    body: (m) =>
      json(m, {
        messages: [user('pick one')],
        tools: Array.from({ length: 100_000 }, (_, i) => ({ type: 'function', function: { name: `tool_${i}`, description: 'Does one thing well.', parameters: { type: 'object', properties: { q: { type: 'string' } } } } })),
      }),
  },
  {
    id: 'attachments',
    what: 'three messages of two 9.9 MiB images each would pass the body limit: one message of two 7 MiB PNGs + one 9 MiB PDF in another (~31 MiB)',
    body: (m) =>
      json(m, {
        messages: [
          user([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: dataUrl('image/png', 7 * MB, png) } }, { type: 'image_url', image_url: { url: dataUrl('image/png', 7 * MB, png) } }]),
          user([{ type: 'file', file: { filename: 'a.pdf', file_data: dataUrl('application/pdf', 9 * MB, pdfHead) } }]),
        ],
      }),
  },
  { id: 'cjk-10mb', what: 'one user message: 3.5 M CJK characters without spaces or punctuation (~10 MiB)', body: (m) => json(m, { messages: [user(cjk(3_500_000))] }) },
  { id: 'english-31mb', what: 'one user message: 31 MiB of ordinary English prose', body: (m) => json(m, { messages: [user('The quick brown fox jumps over the lazy dog, then rests by the river bank. '.repeat(Math.floor(nearLimit / 76)))] }) },
];
