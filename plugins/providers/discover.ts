import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ProviderFactory } from '../../kernel/index.js';

/** Compiled vendor folders: dist/plugins/providers/discover.js → dist/providers/. */
export const providersRoot = fileURLToPath(new URL('../../providers/', import.meta.url));

function isFactory(value: unknown): value is ProviderFactory {
  const f = value as ProviderFactory | null;
  return typeof f === 'object' && f !== null && typeof f.vendor === 'string' && typeof f.create === 'function';
}

/**
 * Imports the default export of every providers/<vendor>/index.js — no hand-kept list. A folder
 * whose module is not a factory, or whose vendor differs from the folder name, stops boot.
 *
 * @example
 * const factories = await discoverVendors(); // Map { 'openai-compatible' => { vendor, create } }
 */
export async function discoverVendors(root = providersRoot): Promise<Map<string, ProviderFactory>> {
  const found = new Map<string, ProviderFactory>();
  if (!existsSync(root)) return found;
  const folders = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  for (const folder of folders) {
    const file = join(root, folder, 'index.js');
    if (!existsSync(file)) continue;
    const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (!isFactory(mod.default)) throw new Error(`providers: ${folder}/index.js does not default-export a provider (defineProvider)`);
    if (mod.default.vendor !== folder) throw new Error(`providers: ${folder}/index.js declares vendor '${mod.default.vendor}'; it must match its folder`);
    found.set(folder, mod.default);
  }
  return found;
}
