import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KernelConfig } from '../config/schema.js';
import { validate, ConfigError } from '../config/load.js';
import { distRoot } from '../paths.js';
import { orderPlugins } from './order.js';
import type { Plugin } from './define.js';
import type { TSchema } from '@sinclair/typebox';

export interface LoadedPlugin {
  plugin: Plugin<TSchema>;
  config: unknown;
}

function isPlugin(value: unknown): value is Plugin<TSchema> {
  const p = value as Plugin<TSchema>;
  return typeof p === 'object' && p !== null && typeof p.name === 'string' && typeof p.register === 'function';
}

/** Built-ins are found by folder name under plugins/; no hand-kept list of imports. */
export function modulePath(name: string, module: string | undefined, baseDir: string): string {
  if (!module) return resolve(distRoot, 'plugins', name, 'index.js');
  return isAbsolute(module) ? module : resolve(baseDir, module);
}

/**
 * Imports every enabled plugin of the config, checks its shape and config slice, and returns them
 * in dependency order. Any problem stops boot with a message naming the plugin.
 */
export async function loadPlugins(config: KernelConfig, baseDir: string): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  for (const [name, entry] of Object.entries(config.plugins)) {
    if (entry.enabled === false) continue;
    const path = modulePath(name, entry.module, baseDir);
    if (!existsSync(path)) {
      throw new ConfigError(`plugin '${name}': module not found at ${path}${entry.module ? '' : ' (no built-in plugin of that name)'}`);
    }
    const mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    if (!isPlugin(mod.default)) throw new ConfigError(`plugin '${name}': ${path} does not default-export a plugin (definePlugin)`);
    const plugin = mod.default;
    if (plugin.name !== name) throw new ConfigError(`plugin '${name}': the module at ${path} is named '${plugin.name}'`);
    const pluginConfig = plugin.config ? validate(plugin.config, entry.config ?? {}, `plugins.${name}.config`) : (entry.config ?? {});
    loaded.push({ plugin, config: pluginConfig });
  }
  try {
    return orderPlugins(loaded.map((l) => ({ ...l, name: l.plugin.name, dependsOn: l.plugin.dependsOn }))).map(({ plugin, config: c }) => ({ plugin, config: c }));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}
