/** A log field value: fixed scalars only, so no call can hand a request body or an object to a log line. */
export type LogValue = string | number | boolean | null | readonly string[];

/**
 * Every structured log event and its fields. Plugins add their own events by declaration merging:
 *
 * @example
 * declare module '../../kernel/index.js' {
 *   interface LogEvents { 'budget.alert_delivered': { alert_id: string; attempts: number } }
 * }
 *
 * Fields are ids, statuses, counts and durations. Credentials, prompts, replies and tool arguments
 * never appear (SPEC.md "Structured log events").
 */
export interface LogEvents {
  'api.started': { host: string; port: number; shape: 'embedded' | 'scale-out'; plugins: readonly string[]; version: string };
  /** Where a person opens the admin UI (only when the admin-ui plugin is on). */
  'api.admin_ui': { url: string };
  'api.stopping': { in_flight: number };
  'api.stopped': { forced_streams: number };
  'health.dependency_down': { component: string; error_code: string };
  'health.dependency_up': { component: string };
  /** error_class and cause (a code, never a message) name what failed on a 5xx (kernel/errors/failure.ts). */
  'request.failed': { request_id: string; status: number; code: string; error_class?: string; cause?: string };
  /** A running request ended with 403 access_revoked; the key's id and visible prefix, never the key. */
  'request.access_revoked': { request_id: string; principal: 'key' | 'session'; key_id: string | null; key_prefix: string | null; reason: string };
  'plugin.order': { plugins: readonly string[] };
  'plugin.hook_failed': { plugin: string; phase: string; request_id: string };
  'store.migrated': { applied: readonly string[]; dialect: string };
  /** A settle's money records could not be committed by any retry (a bug, not an outage). */
  'store.commit_failed': { statements: number; error_code: string };
  /** Stop came while the database still did not answer: these requests' charges were not recorded. */
  'store.commit_abandoned': { requests: number };
  /** A step run after a group's commit (GroupStep) threw or rejected; the step does its own retries. */
  'store.after_commit_failed': { requests: number; error_code: string };
}

export type LogEventName = keyof LogEvents;
