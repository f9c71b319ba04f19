import { defineToken } from '../container/tokens.js';

/**
 * A file of the diagnostics bundle contributed by a plugin (SPEC.md "Operations commands"). The
 * bundle has defaults for parts whose owner is not built or not enabled: `sandbox.json` (the
 * sandbox and egress services: "not configured") and `price-updates.json` ("off"); a plugin that
 * owns one registers a source with the same file name to replace the default.
 *
 * `collect` returns JSON-ready data with no credentials, prompts, replies, tool arguments, names,
 * e-mail addresses or provider and tool-server addresses; a failure becomes `{ unavailable }`.
 *
 * @example
 * ctx.optional(DiagnosticsToken)?.addSource({
 *   file: 'sandbox.json',
 *   collect: async () => ({ sandbox: { reachable: true, latency_ms: 3 }, proxy: { reachable: true } }),
 * });
 */
export interface DiagnosticsSource {
  file: string;
  collect(): Promise<unknown>;
}

/** A background job listed in the bundle with its schedule and last run. */
export interface DiagnosticsJob {
  name: string;
  /** Cron (UTC) or a description such as `every 30 s`; empty when not scheduled. */
  schedule: string;
  lastRun(): Promise<Record<string, unknown> | null>;
}

export interface DiagnosticsRegistry {
  addSource(source: DiagnosticsSource): void;
  addJob(job: DiagnosticsJob): void;
}

export const DiagnosticsToken = defineToken<DiagnosticsRegistry>('diagnostics.registry');

/** The resolved plugin order of this service (dependency order, config order for ties). */
export const PluginOrderToken = defineToken<readonly string[]>('kernel.plugin-order');
