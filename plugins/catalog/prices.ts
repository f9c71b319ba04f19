import { GatewayError } from '../../kernel/index.js';

/** USD 1,000,000 per million tokens: far above any real price, and keeps micro-USD a safe integer. */
const maxMicroUsd = 1_000_000_000_000n;

const decimalPattern = /^(-?)(\d*)(?:\.(\d*))?$/;
const exponentPattern = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/;

function bad(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${message}`, { param });
}

/** `1.5e-7` → `0.00000015`; the shortest text of a JSON number is what the admin typed in practice. */
function expand(text: string): string {
  const m = exponentPattern.exec(text);
  if (!m) return text;
  const [, sign, lead, rest = '', exp] = m;
  const digits = lead! + rest;
  const point = 1 + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A price in US dollars per million tokens, as a JSON number (`2.5`) or a string (`"2.50"`), to
 * integer micro-USD per million tokens by exact decimal arithmetic: `0.15` → `150000`. At most
 * six decimals count (trailing zeros beyond them are fine); negative prices are refused.
 *
 * @example
 * parsePrice('2.50', 'input_price'); // 2_500_000
 */
export function parsePrice(value: unknown, param: string): number {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw bad(param, 'must be a number of US dollars per million tokens.');
    text = expand(String(value));
  } else if (typeof value === 'string') text = value.trim();
  else throw bad(param, 'must be a number of US dollars per million tokens, e.g. 2.5 or "2.50".');
  const m = decimalPattern.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw bad(param, 'must be a number of US dollars per million tokens, e.g. 2.5 or "2.50".');
  const [, sign, whole = '', fraction = ''] = m;
  const significant = fraction.replace(/0+$/, '');
  const micro = BigInt(whole || '0') * 1_000_000n + BigInt(significant.padEnd(6, '0') || '0');
  if (sign === '-' && micro !== 0n) throw bad(param, 'must not be negative.');
  if (significant.length > 6) throw bad(param, 'has more than 6 decimals; prices are kept in millionths of a US dollar.');
  if (micro > maxMicroUsd) throw bad(param, 'is above USD 1,000,000 per million tokens.');
  return Number(micro);
}

/**
 * Micro-USD per million tokens back to a dollar string with at least two decimals.
 *
 * @example
 * formatPrice(150000); // '0.15'
 */
export function formatPrice(micro: number | null): string | null {
  if (micro === null) return null;
  const whole = Math.floor(micro / 1_000_000);
  const fraction = String(micro % 1_000_000).padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction}`;
}
