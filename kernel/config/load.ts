import { readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { TSchema, Static } from '@sinclair/typebox';
import { KernelConfigSchema, type KernelConfig } from './schema.js';
import { packageRoot } from '../paths.js';

/** A config problem that stops start-up; the message names the field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Environment variables the kernel reads, and the config path each one sets. */
export const kernelEnv: Record<string, { path: string[]; number?: boolean; list?: boolean }> = {
  SVC_HOST: { path: ['server', 'host'] },
  SVC_PORT: { path: ['server', 'port'], number: true },
  SVC_LOG_LEVEL: { path: ['log', 'level'] },
  SVC_DATA_DIR: { path: ['dataDir'] },
  SVC_DATABASE_URL: { path: ['database', 'url'] },
  SVC_REDIS_URL: { path: ['cache', 'url'] },
  SVC_REDIS_PREFIX: { path: ['cache', 'prefix'] },
  SVC_CORS_ORIGINS: { path: ['server', 'corsOrigins'], list: true },
  SVC_TRUSTED_PROXIES: { path: ['server', 'trustedProxies'], list: true },
};

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key (keeping the first's key order); anything else is replaced. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

function setPath(target: Json, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Json;
  }
  node[path[path.length - 1]!] = value;
}

function readJson(file: string): Json {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isObject(parsed)) throw new Error('not a JSON object');
    return parsed;
  } catch (err) {
    throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
  }
}

/** Checks a value against a schema after filling defaults; throws ConfigError naming the first bad field. */
export function validate<S extends TSchema>(schema: S, value: unknown, where: string): Static<S> {
  const filled = Value.Default(schema, Value.Clone(value ?? {}));
  const converted = Value.Convert(schema, filled);
  const first = Value.Errors(schema, converted).First();
  if (first) {
    const field = [where, ...first.path.split('/').filter(Boolean)].filter(Boolean).join('.');
    throw new ConfigError(`invalid config field ${field || '(root)'}: ${first.message}`);
  }
  return converted as Static<S>;
}

export interface LoadedConfig {
  config: KernelConfig;
  /** Folder of the operator's config file; third-party module paths resolve against it. */
  baseDir: string;
  /** Environment the plugins may read their own variables from. */
  env: NodeJS.ProcessEnv;
}

/**
 * Builds the config: config/default.json, then the operator's file (SVC_CONFIG), then SVC_*
 * environment variables, validated with typebox. Plugin slices are validated by the loader.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Json = {}): LoadedConfig {
  let merged: unknown = readJson(resolve(packageRoot, 'config/default.json'));
  let baseDir = packageRoot;
  const file = env.SVC_CONFIG;
  if (file) {
    const path = isAbsolute(file) ? file : resolve(process.cwd(), file);
    if (!existsSync(path)) throw new ConfigError(`config file ${path} (SVC_CONFIG) does not exist`);
    merged = deepMerge(merged, readJson(path));
    baseDir = dirname(path);
  }
  const fromEnv: Json = {};
  for (const [name, spec] of Object.entries(kernelEnv)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = spec.number ? Number(raw) : spec.list ? raw.split(',').map((v) => v.trim()).filter(Boolean) : raw;
    if (spec.number && !Number.isInteger(value)) throw new ConfigError(`invalid config field ${spec.path.join('.')} (${name}): not an integer`);
    setPath(fromEnv, spec.path, value);
  }
  merged = deepMerge(deepMerge(merged, fromEnv), overrides);
  return { config: validate(KernelConfigSchema, merged, ''), baseDir, env };
}
