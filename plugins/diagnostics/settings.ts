import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { KernelConfig } from '../../kernel/index.js';
import { masked } from './safe.js';

/** Settings with each secret (and every address) only as set / not set. */
export function settingsPart(kernel: KernelConfig, env: NodeJS.ProcessEnv): unknown {
  const variables = Object.fromEntries(
    Object.keys(env)
      .filter((k) => k.startsWith('SVC_') || k.startsWith('OTEL_'))
      .sort()
      .map((k) => [k, env[k] ? 'set' : 'not set']),
  );
  return {
    shape: kernel.database.url || kernel.cache.url ? 'scale-out' : 'embedded',
    server: { port: kernel.server.port, body_limit_bytes: kernel.server.bodyLimitBytes, shutdown_grace_ms: kernel.server.shutdownGraceMs },
    log_level: kernel.log.level,
    database: { url: masked(kernel.database.url), pool_max: kernel.database.poolMax },
    cache: { url: masked(kernel.cache.url), prefix: masked(kernel.cache.prefix) },
    trace_export: { endpoint: masked(env.SVC_OTLP_ENDPOINT), headers: masked(env.SVC_OTLP_HEADERS) },
    plugins: Object.fromEntries(
      Object.entries(kernel.plugins).map(([name, p]) => [name, { enabled: p.enabled !== false, third_party: Boolean(p.module), config: masked(p.config ?? {}) }]),
    ),
    environment: variables,
  };
}

/** Version labels of a key list (`v2:<base64>,v1:<base64>`); the keys themselves are dropped here. */
function labels(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter(Boolean)
    .map((e) => e.slice(0, Math.max(0, e.indexOf(':'))).trim())
    .filter(Boolean);
}

/** Recovery key versions given and the one in use (SPEC.md Versioning 3); never a key. */
export function recoveryKeysPart(kernel: KernelConfig, env: NodeJS.ProcessEnv): unknown {
  let given: string[] = [];
  let source = 'none';
  if (env.SVC_RECOVERY_KEYS) {
    given = labels(env.SVC_RECOVERY_KEYS);
    source = 'SVC_RECOVERY_KEYS';
  } else {
    const file = resolve(process.cwd(), kernel.dataDir, 'recovery-keys');
    if (existsSync(file)) {
      given = labels(readFileSync(file, 'utf8'));
      source = 'data folder';
    }
  }
  const wanted = env.SVC_RECOVERY_KEY_VERSION?.trim();
  const inUse = wanted && given.includes(wanted) ? wanted : (given[0] ?? null);
  return { source, versions_given: given, in_use: inUse, requested_in_use: wanted ? (given.includes(wanted) ? wanted : 'not among the versions given') : null };
}
