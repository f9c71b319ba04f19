import { png } from './files.js';

/**
 * 1,000 malformed or hostile request bodies, generated deterministically from a seed. Every one
 * must be refused with a 4xx (so none may be a valid request: each carries at least one fault).
 */

/** mulberry32: a small seeded PRNG, so a failing body can be regenerated from its index. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rnd = () => number;
type Json = Record<string, unknown>;
const pick = <T>(r: Rnd, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
const int = (r: Rnd, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** A valid body, which each generator then breaks. */
export function validBody(model: string): Json {
  return { model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }], temperature: 0.5, max_tokens: 100 };
}

const deepArray = (d: number): string => '['.repeat(d) + ']'.repeat(d);
const deepObject = (d: number): string => '{"a":'.repeat(d) + '1' + '}'.repeat(d);

/** Values of the wrong type (or out of range) for each field the service checks. */
const wrong: Record<string, readonly unknown[]> = {
  model: [null, 1, true, [], {}, '', '   ', 'nope', 'x:y', 'route/', 'auto', 'local:' + 'a'.repeat(5000)],
  messages: [null, 1, 'Hello', {}, [], true, { 0: { role: 'user', content: 'x' }, length: 1 }],
  'messages.0': [null, 1, 'x', [], true, {}],
  'messages.0.role': [null, 1, 'robot', '', 'USER', [], {}, 'user\u0000'],
  'messages.0.content': [1, true, {}, [1], [null], [{}], [{ type: 'text' }], [{ type: 'image_url' }], [{ type: 'image_url', image_url: { url: 5 } }], [{ type: 'file', file: {} }]],
  temperature: ['hot', -1, 3, true, [], {}, 1e308, -0.0001],
  top_p: [-0.5, 2, 'x', true, []],
  max_tokens: [-1, 0, 1.5, '10', true, 1e300, [], {}, 4097, 2 ** 53],
  max_completion_tokens: [-1, 0, 0.5, 'many', false, 1e20, 4097],
  stream: ['yes', 1, 0, [], {}, 'true'],
  stream_options: ['x', 1, [], { include_usage: 'yes' }, true],
  stop: [1, [1], ['a', 'b', 'c', 'd', 'e'], {}, true, [null]],
  tools: ['x', 1, {}, [1], [{}], [{ type: 'function' }], [{ type: 'function', function: { name: '' } }], [{ type: 'function', function: { name: 'a', parameters: 'x' } }], [{ type: 'code', function: { name: 'a' } }]],
  tool_choice: ['required', 'any', 1, {}, { type: 'function', function: { name: 'a' } }, true],
  n: [2, 0, -1, '1', true, 1.5],
  response_format: [{ type: 'json_object' }, 'text', 1, {}, { type: 'json_schema' }],
  functions: [[], {}, 1, 'f'],
  function_call: ['auto', 'none', {}, 0],
};

function setPath(body: Json, path: string, value: unknown): Json {
  const keys = path.split('.');
  let at: Record<string, unknown> = body;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys.at(-1)!] = value;
  return body;
}

/** One fault on top of a valid body: the one thing that makes it invalid. */
function wrongType(r: Rnd, model: string): string {
  const field = pick(r, Object.keys(wrong));
  const body = validBody(model);
  if (field.startsWith('messages.0')) (body.messages as Json[]).reverse(); // the user message first
  return JSON.stringify(setPath(body, field, pick(r, wrong[field]!)));
}

function badJson(r: Rnd, model: string): string {
  const text = JSON.stringify(validBody(model));
  const faults = [
    () => text.slice(0, int(r, 0, text.length - 2)),
    () => text.replace(/"/g, "'"),
    () => text.replace('"model"', 'model'),
    () => text.replace(']', ',]'),
    () => text.replace('}', '},'),
    () => `${text}${text}`,
    () => text.replace('0.5', 'NaN'),
    () => text.replace('100', 'Infinity'),
    () => text.replace('100', '0x64'),
    () => `/* hi */${text}`,
    () => text.replace('"Hello there"', '"tab\there"'),
    () => text.replace('"Hello there"', '"bad \\x escape"'),
    () => text.replace('"Hello there"', '"unterminated'),
    () => text.slice(0, -1) + ',"x":}',
    () => '\ufeff' + text.slice(0, -1),
    () => '',
    () => '   ',
  ];
  return pick(r, faults)();
}

function hugeNumber(r: Rnd, model: string): string {
  const field = pick(r, ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'n']);
  const number = pick(r, ['1e999999', '-1e999999', '9'.repeat(int(r, 20, 100_000)), '123456789012345678901234567890.5', '-0.0000000000000000000001e-400x']);
  const text = JSON.stringify({ ...validBody(model), [field]: '__N__' });
  return text.replace('"__N__"', number.endsWith('x') ? number.slice(0, -1) + '1e999' : number);
}

function deep(r: Rnd, model: string): string {
  const depth = pick(r, [100, 1000, 10_000, 100_000]);
  const nested = r() < 0.5 ? deepArray(depth) : deepObject(depth);
  const where = int(r, 0, 5);
  const valid = JSON.stringify(validBody(model));
  if (where === 0) return nested;
  if (where === 1) return valid.replace(/"messages":\[.*?\](?=,"temperature")/, `"messages":${nested}`);
  if (where === 2) return valid.replace('"Hello there"', nested);
  if (where === 3) return valid.replace('"temperature":0.5', `"temperature":0.5,"n":2,"extra":${nested}`);
  if (where === 4) return valid.replace('"temperature":0.5', `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${nested}}}}]`);
  return valid.replace('"max_tokens":100', `"stop":${nested}`);
}

function invalidUtf8(r: Rnd, model: string): Buffer {
  const text = JSON.stringify(validBody(model));
  const at = text.indexOf('Hello there') + int(r, 0, 10);
  const bad = pick(r, [[0xff], [0xfe, 0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]]);
  const b = Buffer.from(text, 'utf8');
  return Buffer.concat([b.subarray(0, at), Buffer.from(bad), b.subarray(at)]);
}

const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function badBase64(r: Rnd, model: string): string {
  const good = png().toString('base64');
  const payload = pick(r, [
    () => good.slice(0, -1),
    () => good.slice(0, 5) + '=' + good.slice(6),
    () => good.replace(/\+/g, '-').replace(/\//g, '_') + '-_-_',
    () => good.slice(0, 20) + '\n' + good.slice(20),
    () => good.slice(0, 20) + ' ' + good.slice(21),
    // Always one character outside the alphabet, so it can never decode to a valid text file.
    () => Array.from({ length: int(r, 1, 200) }, () => pick(r, [...b64, '!', '*', '%', '.', 'é'])).join('') + pick(r, ['!', '*', '%', '.', 'é']),
    () => '====',
    () => '',
  ])();
  let type = pick(r, ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain']);
  const body = validBody(model);
  let url = `data:${type};base64,${payload}`;
  if (r() < 0.2) {
    // Valid base64 of random bytes: only the file signature is wrong (so never a text file).
    type = pick(r, ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf']);
    url = `data:${type};base64,${Buffer.from(Array.from({ length: 64 }, () => int(r, 0, 255))).toString('base64')}`;
  }
  const part = type.startsWith('image/') ? { type: 'image_url', image_url: { url } } : { type: 'file', file: { filename: 'f.txt', file_data: url } };
  (body.messages as Json[])[1]!.content = [{ type: 'text', text: 'see' }, part];
  return JSON.stringify(body);
}

function notAnObject(r: Rnd, model: string): string {
  return pick(r, ['null', '[]', '"text"', '1', 'true', 'false', '-0', JSON.stringify([validBody(model)]), JSON.stringify(JSON.stringify(validBody(model)))]);
}

function pollution(r: Rnd, model: string): string {
  const inner = JSON.stringify(validBody(model)).slice(1, -1);
  return pick(r, [
    `{"__proto__":{${inner}}}`,
    `{"constructor":{"prototype":{${inner}}}}`,
    `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"model":"${model}","messages":[]}`,
    `{"model":"${model}","messages":[{"__proto__":{"role":"user","content":"x"}}]}`,
    `{"model":"${model}","messages":{"__proto__":[],"length":1,"0":{"role":"user","content":"x"}}}`,
    `{"model":"${model}","messages":[{"role":"user","content":"x"}],"n":2,"__proto__":{"n":1}}`,
    `{${inner},"tool_choice":{"__proto__":"auto"}}`,
    `{"model":{"toString":"local:x"},"messages":[{"role":"user","content":"x"}]}`,
  ]);
}

function longStrings(r: Rnd, model: string): string {
  const long = 'z'.repeat(int(r, 100_000, 2_000_000));
  const body = validBody(model);
  const where = int(r, 0, 3);
  if (where === 0) body.model = long;
  else if (where === 1) (body.messages as Json[])[1]!.role = long;
  else if (where === 2) body.tool_choice = long;
  else Object.assign(body, { stop: [long, 'a', 'b', 'c', 'd'] });
  return JSON.stringify(body);
}

/** The generators, each producing a body with at least one fault. */
export const generators = { wrongType, badJson, hugeNumber, deep, invalidUtf8, badBase64, notAnObject, pollution, longStrings };

/** `count` hostile bodies for `model`, the same every run (generated lazily: some are megabytes). */
export function* hostileBodies(count: number, model: string, seed = 0x5eed): Generator<{ index: number; kind: string; body: string | Buffer }> {
  const r = prng(seed);
  const kinds = Object.entries(generators);
  for (let index = 0; index < count; index++) {
    const [kind, gen] = kinds[index % kinds.length]!;
    yield { index, kind, body: gen(r, model) };
  }
}
