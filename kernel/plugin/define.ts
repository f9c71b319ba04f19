import type { TSchema, Static, TObject } from '@sinclair/typebox';
import type { EntitySchema } from '@mikro-orm/core';
import type { DependencyContainer } from 'tsyringe';
import type { Token } from '../container/tokens.js';
import type { PhaseHooks, PhaseName } from '../pipeline/phases.js';
import type { Logger } from '../log/logger.js';
import type { KernelConfig } from '../config/schema.js';
import type { Migration } from '../store/migrations.js';
import type { RouteHandler, HttpMethod, RouteOptions } from '../http/route.js';
import type { HealthCheck, CheckResult } from '../health/registry.js';

/**
 * What a plugin's `register` receives: its typed config slice, its own child container, and the
 * calls that attach it to the service (hooks, routes, health checks, shared services).
 */
export interface PluginContext<C = unknown> {
  readonly name: string;
  readonly config: C;
  readonly kernel: KernelConfig;
  /** The process environment, for the plugin's own SVC_* variables (document them in its README). */
  readonly env: NodeJS.ProcessEnv;
  readonly log: Logger;
  /** The plugin's child container: its own services live here. */
  readonly container: DependencyContainer;
  /** Shares a service with every plugin through the root container. */
  provide<T>(token: Token<T>, value: T): void;
  /** A shared service; throws if no plugin provides it (declare the provider in dependsOn). */
  use<T>(token: Token<T>): T;
  /** A shared service that may be absent (its plugin disabled). */
  optional<T>(token: Token<T>): T | undefined;
  /** Attaches a hook to a pipeline phase; an unknown phase stops boot. */
  hook<P extends PhaseName>(phase: P, fn: PhaseHooks[P]): void;
  /** Adds an HTTP route; errors thrown by the handler are rendered in the spec's shape. */
  route(method: HttpMethod, path: string, handler: RouteHandler, options?: RouteOptions): void;
  /** Adds a `/healthz` component; a critical one down makes the service `down` (503). */
  health(component: string, check: HealthCheck, options?: { critical?: boolean }): void;
  /** Adds components that come and go at run time (e.g. `provider:<name>` per provider); never critical. */
  healthComponents(list: () => Promise<Record<string, CheckResult>>): void;
}

/**
 * A subcommand of the `svc` command contributed by a plugin, e.g. `svc admin create-admin`. It runs
 * against a booted service (store, cache, every plugin registered and started) that does not listen.
 *
 * @example
 * commands: [{ name: 'admin create-admin', summary: 'Create an instance admin', run: async (ctx, args) => { ... } }]
 */
export interface PluginCommand<C = unknown> {
  /** Words after `svc`, space separated. */
  name: string;
  summary: string;
  /**
   * The usage line shown by `svc help <name>` and on bad arguments, e.g.
   * `svc admin create-admin --email <email> --password-file <file>`. Defaults to `svc <name>`.
   */
  usage?: string;
  /**
   * Flags the command takes. When given, the `svc` command checks the arguments before booting
   * anything and exits 2 with the usage line on an unknown, missing or malformed flag.
   */
  options?: Record<string, { type: 'string' | 'boolean'; required?: boolean }>;
  /**
   * Runs instead of `run` when the service cannot boot (e.g. the database is unreachable), for a
   * command that must answer anyway (`svc diagnostics`). Nothing is open; it gets the config, the
   * plugin order and the boot error.
   */
  whenBootFails?(input: { kernel: KernelConfig; env: NodeJS.ProcessEnv; plugins: readonly string[]; error: Error }, args: string[], out: NodeJS.WritableStream): Promise<void>;
  /**
   * Runs without booting the service (no store, cache or other plugin: only its plugin's config),
   * for tools that need none, e.g. `svc catalogue sign` on a machine without the database.
   */
  standalone?: boolean;
  /** Writes its result to stdout; throws to exit non-zero with the message on stderr. */
  run(ctx: PluginContext<C>, args: string[], out: NodeJS.WritableStream): Promise<void>;
}

/**
 * A plugin: a plain typed object. Built-ins live in plugins/<name>/index.ts; third-party plugins
 * are loaded by module path from the config file. Both default-export the object.
 *
 * @example
 * export default definePlugin({
 *   name: 'hello',
 *   config: Type.Object({ greeting: Type.String({ default: 'hello' }) }),
 *   register(ctx) {
 *     ctx.hook('receive', (rc) => { rc.headers['x-hello'] = ctx.config.greeting; });
 *   },
 * });
 */
export interface Plugin<S extends TSchema = TObject> {
  name: string;
  /** Plugins that must be registered and started first; an unknown or disabled one stops boot. */
  dependsOn?: string[];
  /** Typebox schema of the plugin's config section; defaults are filled in at boot. */
  config?: S;
  /** MikroORM entity schemas the plugin owns. */
  entities?: EntitySchema[];
  /** Schema changes for its tables, run in plugin order at start. */
  migrations?: Migration[];
  /** `svc` subcommands this plugin adds. */
  commands?: PluginCommand<Static<S>>[];
  register(ctx: PluginContext<Static<S>>): void | Promise<void>;
  /** Runs after every plugin registered, in dependency order (load snapshots, start timers). */
  start?(ctx: PluginContext<Static<S>>): void | Promise<void>;
  /** Runs at shutdown in reverse order (flush buffers, stop timers). */
  stop?(ctx: PluginContext<Static<S>>): void | Promise<void>;
}

/**
 * Types a plugin object; does nothing at run time.
 *
 * @example
 * export default definePlugin({ name: 'health', register(ctx) { ... } });
 */
export function definePlugin<S extends TSchema = TObject>(plugin: Plugin<S>): Plugin<S> {
  return plugin;
}
