import type { TSchema, Static, TObject } from '@sinclair/typebox';
import type { EntitySchema } from '@mikro-orm/core';
import type { DependencyContainer } from 'tsyringe';
import type { Token } from '../container/tokens.js';
import type { PhaseHooks, PhaseName } from '../pipeline/phases.js';
import type { Logger } from '../log/logger.js';
import type { KernelConfig } from '../config/schema.js';
import type { Migration } from '../store/migrations.js';
import type { RouteHandler, HttpMethod } from '../http/route.js';
import type { HealthCheck } from '../health/registry.js';

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
  route(method: HttpMethod, path: string, handler: RouteHandler): void;
  /** Adds a `/healthz` component; a critical one down makes the service `down` (503). */
  health(component: string, check: HealthCheck, options?: { critical?: boolean }): void;
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
