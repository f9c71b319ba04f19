import { createServer, type Server } from 'node:http';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { CatalogueEntry } from '../../kernel/index.js';

/**
 * Test stand-ins for a feed publisher: key pairs and signed documents made straight from the
 * documented format (plugins/catalogue-feed/README.md) with node:crypto, not with the plugin's code,
 * so the tests hold the plugin to the format rather than to itself.
 */
export interface Publisher {
  privateKey: KeyObject;
  /** Raw 32-byte public key in base64, as config pins it. */
  publicKey: string;
}

export function publisher(): Publisher {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64') };
}

/** A list entry: the shape the kernel contract names. */
export type Entry = CatalogueEntry;

export function entry(id: string, input: number | null, output: number | null): Entry {
  return { id, context_window: 128_000, output_limit: 16_384, input_micro_usd_per_mtok: input, output_micro_usd_per_mtok: output, images: true, pdf: false, tools: true };
}

export function listText(sequence: number, providers: Record<string, Entry[]>, issuedAt = new Date().toISOString()): string {
  return JSON.stringify({ version: 1, sequence, issued_at: issuedAt, providers });
}

/** The document a feed URL serves: the list text signed behind the format's domain prefix. */
export function signed(text: string, by: Publisher): string {
  const signature = sign(null, Buffer.concat([Buffer.from('svc-catalogue-feed/1\n'), Buffer.from(text)]), by.privateKey).toString('base64');
  return JSON.stringify({ format: 'svc-catalogue-feed', signature, list: text });
}

/** A local feed host: serves whatever `body`/`status` say now and counts the requests it got. */
export class FeedServer {
  body = '';
  status = 200;
  requests = 0;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.requests++;
      res.writeHead(this.status, { 'content-type': 'application/json' });
      res.end(this.body);
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/feed.json`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}

/** A TCP port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((done) => s.close(() => done()));
  return port;
}
