/**
 * A command-line MCP tool server (newline-delimited JSON-RPC over stdio) for the sandbox tests.
 * Its tools probe the sandbox from the inside: files, memory, processes, time and the network.
 * Built-ins only: it runs inside the sandbox, where nothing of the project's modules is visible.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

type Args = Record<string, unknown>;
const code = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? 'error';

const tools: Record<string, (a: Args) => unknown | Promise<unknown>> = {
  echo: (a) => ({ text: a.text, uid: process.getuid?.(), cwd: process.cwd() }),
  read: (a) => { try { return { content: readFileSync(String(a.path), 'utf8') }; } catch (e) { return { error: code(e) }; } },
  write: (a) => { try { writeFileSync(String(a.path), 'x'); return { written: true }; } catch (e) { return { error: code(e) }; } },
  mkdir: (a) => { try { mkdirSync(String(a.path)); return { made: true }; } catch (e) { return { error: code(e) }; } },
  alloc: (a) => {
    const held: Buffer[] = [];
    for (let i = 0; i < Number(a.mb); i++) held.push(Buffer.alloc(1024 * 1024, 1));
    return { held: held.length };
  },
  spawn: async (a) => {
    let started = 0;
    for (let i = 0; i < Number(a.n); i++) {
      const ok = await new Promise<boolean>((done) => {
        const c = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
        c.once('spawn', () => done(true));
        c.once('error', () => done(false));
      });
      if (ok) started++;
    }
    return { started };
  },
  spin: () => { for (;;) { /* burns CPU until the time limit ends the call */ } },
  connect: (a) => new Promise((done) => {
    const s = connect({ host: String(a.host), port: Number(a.port), timeout: 2000 });
    s.once('connect', () => { s.destroy(); done({ connected: true }); });
    s.once('timeout', () => { s.destroy(); done({ error: 'timeout' }); });
    s.once('error', (e) => done({ error: code(e) }));
  }),
  /** A CONNECT through the proxy the sandbox announces in HTTPS_PROXY, then one HTTP request in the tunnel. */
  viaProxy: (a) => new Promise((done) => {
    const proxy = new URL(process.env.HTTPS_PROXY ?? 'http://0.0.0.0:1');
    const s = connect({ host: proxy.hostname, port: Number(proxy.port) });
    let text = '';
    s.on('data', (b) => {
      text += b.toString();
      if (text.startsWith('HTTP/1.1 200') && text.includes('\r\n\r\n') && !text.includes('GET-SENT')) {
        text += 'GET-SENT';
        s.write(`GET /hello HTTP/1.1\r\nhost: ${String(a.host)}\r\nconnection: close\r\n\r\n`);
      }
    });
    s.on('error', (e) => done({ error: code(e) }));
    s.on('close', () => done({ status: Number(text.slice(9, 12)), body: text.slice(text.lastIndexOf('\r\n\r\n') + 4) }));
    s.write(`CONNECT ${String(a.host)}:${Number(a.port)} HTTP/1.1\r\nhost: ${String(a.host)}:${Number(a.port)}\r\n\r\n`);
  }),
};

const reply = (id: unknown, result: unknown): void => void process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as { id?: unknown; method: string; params?: { name?: string; arguments?: Args } };
  if (m.method === 'initialize') return reply(m.id, { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'sandbox-probe', version: '1.0.0' } });
  if (m.method === 'tools/list') return reply(m.id, { tools: Object.keys(tools).map((name) => ({ name, inputSchema: { type: 'object' } })) });
  if (m.method === 'tools/call') {
    const tool = tools[m.params?.name ?? ''];
    if (!tool) return process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'unknown tool' } }) + '\n');
    return void Promise.resolve(tool(m.params?.arguments ?? {})).then((r) => reply(m.id, { content: [{ type: 'text', text: JSON.stringify(r) }] }));
  }
});
