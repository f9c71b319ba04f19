import { createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { PluginCommand } from '../../kernel/index.js';
import type { FeedConfig } from './config.js';
import { loadKeys } from './config.js';
import { FeedError, envelopeText, openEnvelope } from './list.js';
import { generateKeys, parsePrivateKey, parsePublicKey, signList } from './signing.js';

function flags(args: string[], names: string[], multiple: string[] = []): Record<string, string | string[] | undefined> {
  const options = Object.fromEntries([...names, ...multiple].map((n) => [n, { type: 'string' as const, multiple: multiple.includes(n) }]));
  return parseArgs({ args, options, allowPositionals: false }).values as Record<string, string | string[] | undefined>;
}

function need(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`--${flag} is required`);
  return value;
}

function summary(text: string, keys: ReturnType<typeof loadKeys>): string {
  const { list } = openEnvelope(text, keys);
  const models = Object.values(list.providers).reduce((n, e) => n + e.length, 0);
  return `sequence ${list.sequence}, issued_at ${list.issuedAt}, ${Object.keys(list.providers).length} providers, ${models} models`;
}

/** `svc catalogue keygen|sign|verify`: what an operator needs to publish their own feed (README). */
export const commands: PluginCommand<FeedConfig>[] = [
  {
    name: 'catalogue keygen',
    standalone: true,
    summary: 'Make an Ed25519 key pair for signing price lists (--out private.pem)',
    async run(_ctx, args, out) {
      const file = need(flags(args, ['out']).out, 'out');
      if (existsSync(file)) throw new Error(`${file} exists; refusing to overwrite a private key`);
      const { privatePem, publicKey } = generateKeys();
      writeFileSync(file, privatePem, { mode: 0o600, flag: 'wx' });
      out.write(`private key written to ${file} (keep it secret)\npublic key: ${publicKey}\n`);
    },
  },
  {
    name: 'catalogue sign',
    standalone: true,
    summary: 'Sign a price list (--key private.pem --list list.json [--out signed.json])',
    async run(_ctx, args, out) {
      const f = flags(args, ['key', 'list', 'out']);
      const key = parsePrivateKey(readFileSync(need(f.key, 'key'), 'utf8'));
      const listText = readFileSync(need(f.list, 'list'), 'utf8');
      const signed = envelopeText(listText, signList(listText, key));
      // Never publish a list the service would refuse: check it as the service will.
      const line = summary(signed, [createPublicKey(key)]);
      if (typeof f.out === 'string') {
        writeFileSync(f.out, signed);
        out.write(`signed: ${line}\n`);
      } else out.write(signed);
    },
  },
  {
    name: 'catalogue verify',
    standalone: true,
    summary: 'Verify a signed price list (--in signed.json [--public-key <base64>]…; default: the pinned keys)',
    async run(ctx, args, out) {
      const f = flags(args, ['in'], ['public-key']);
      const given = (f['public-key'] as string[] | undefined) ?? [];
      const keys = given.length ? given.map((k) => parsePublicKey(k)) : loadKeys(ctx.config);
      if (keys.length === 0) throw new Error('no public key: pass --public-key or pin one in plugins["catalogue-feed"].config.publicKeys');
      try {
        out.write(`ok: ${summary(readFileSync(need(f.in, 'in'), 'utf8'), keys)}\n`);
      } catch (err) {
        if (err instanceof FeedError) throw new Error(`${err.code}: ${err.message}`);
        throw err;
      }
    },
  },
];
