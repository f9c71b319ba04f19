/**
 * A deterministic corpus of varied prompts for measuring how tight the hold's input bound is:
 * code, prose, CJK, emoji, JSON, numbers, whitespace-heavy text, random base64, and mixes.
 */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = 'the gateway prices every request before it is sent and never lets a budget run over even when many replicas answer at once while streaming replies to clients across workspaces'.split(' ');
const cjk = '我们的网关在发送之前对每个请求进行定价预算永远不会超支。日本語のテキストも含まれます。한국어 문장도 포함되어 있습니다。'.split('');
const emoji = ['😀', '🚀', '👍🏽', '🇩🇪', '👨‍👩‍👧‍👦', '🔥', '✨', '🧪', '🎉', '🤖', '❤️', '🏳️‍🌈'];
const cyrillicArabic = ['привет', 'мир', 'бюджет', 'запрос', 'مرحبا', 'ميزانية', 'طلب', 'Γειά', 'σου', 'κόσμε'];
const codeLines = [
  'export async function handler(req: Request): Promise<Response> {',
  '  const body = await req.json() as { messages: Message[] };',
  '  if (!body.messages?.length) throw new Error("no messages");',
  '  for (let i = 0; i < items.length; i++) total += items[i]!.price * qty;',
  'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)',
  '    SELECT sum(cost_micro_usd) FROM usage_records WHERE workspace_id = $1;',
  '}',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }',
];

type Gen = (r: () => number, size: number) => string;
const pick = <T>(r: () => number, a: T[]): T => a[Math.floor(r() * a.length)]!;
function fill(r: () => number, size: number, piece: () => string, sep = ''): string {
  let s = '';
  while (s.length < size) s += (s ? sep : '') + piece();
  return s;
}

export const generators: Record<string, Gen> = {
  prose: (r, n) => fill(r, n, () => pick(r, words) + (r() < 0.08 ? '.' : ''), ' '),
  code: (r, n) => fill(r, n, () => pick(r, codeLines), '\n'),
  cjk: (r, n) => fill(r, n, () => pick(r, cjk)),
  emoji: (r, n) => fill(r, n, () => pick(r, emoji) + (r() < 0.3 ? ' ' : '')),
  json: (r, n) => JSON.stringify(Array.from({ length: Math.max(1, Math.floor(n / 60)) }, (_, i) => ({ id: i, name: pick(r, words), price: Math.round(r() * 1e6) / 100, tags: [pick(r, words), pick(r, cyrillicArabic)], ok: r() < 0.5 }))),
  numbers: (r, n) => fill(r, n, () => (r() < 0.5 ? String(Math.floor(r() * 1e9)) : (r() * 1e4).toFixed(4)), r() < 0.5 ? ', ' : '\n'),
  whitespace: (r, n) => fill(r, n, () => ' '.repeat(1 + Math.floor(r() * 12)) + pick(r, words) + (r() < 0.2 ? '\n\n\t\t' : '')),
  base64: (r, n) => Buffer.from(Array.from({ length: Math.ceil((n * 3) / 4) }, () => Math.floor(r() * 256))).toString('base64').slice(0, n),
  multilingual: (r, n) => fill(r, n, () => pick(r, cyrillicArabic), ' '),
  mixed: (r, n) => fill(r, n, () => pick(r, [generators.prose!, generators.code!, generators.cjk!, generators.emoji!, generators.numbers!])(r, 40), '\n'),
};

export interface Sample { category: string; messages: string[] }

/** `perCategory` prompts of each kind, 1–3 messages, 20–6000 characters each. */
export function corpus(perCategory = 40, seed = 20261123): Sample[] {
  const r = prng(seed);
  const out: Sample[] = [];
  for (const [category, gen] of Object.entries(generators)) {
    for (let i = 0; i < perCategory; i++) {
      const n = 1 + Math.floor(r() * 3);
      out.push({ category, messages: Array.from({ length: n }, () => gen(r, 20 + Math.floor(r() ** 2 * 6000))) });
    }
  }
  return out;
}
