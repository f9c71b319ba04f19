import { createHash } from 'node:crypto';

const allowed = /[^a-zA-Z0-9_-]/g;

/**
 * The function name the model sees for a workspace tool: `<server>__<tool>`, with characters
 * OpenAI-format names do not allow replaced by `_`. MCP names may hold dots and run to 128
 * characters while function names allow 64 (docs/TOOLS-NOTES.md), so a name that is too long,
 * or that collides with a client tool or another workspace tool, ends in a hash of the original
 * pair instead. The caller keeps the map back from this name to the server and tool.
 */
export function functionName(server: string, tool: string, taken: Set<string>): string {
  const plain = `${server}__${tool}`.replace(allowed, '_');
  if (plain.length <= 64 && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 10);
  for (let salt = 0; ; salt++) {
    const tail = salt === 0 ? hash : `${hash}${salt}`;
    const name = `${plain.slice(0, 63 - tail.length)}_${tail}`;
    if (!taken.has(name)) return name;
  }
}
