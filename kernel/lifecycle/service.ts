import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { EntitySchema } from '@mikro-orm/core';
import { createRootContainer, provide, resolve, tryResolve, type DependencyContainer } from '../container/tokens.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import type { KernelConfig } from '../config/schema.js';
import { createLogger, type LogSink, type Logger } from '../log/logger.js';
import { loadPlugins, type LoadedPlugin } from '../plugin/load.js';
import type { PluginContext } from '../plugin/define.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { HttpFront } from '../http/server.js';
import { openStore, migrate, StoreToken, type Store } from '../store/orm.js';
import { openCache, CacheToken, type CachePort } from '../cache/index.js';
import { HealthRegistry, HealthToken } from '../health/registry.js';
import { DependenciesToken, type Dependencies } from '../health/dependency.js';
import { criticalDependencies } from '../health/critical.js';
import { guardStore } from '../store/guarded.js';
import { GroupCommit, GroupCommitToken } from '../store/group-commit.js';
import { guardCache } from '../cache/guarded.js';
import { packageRoot } from '../paths.js';
import { PluginOrderToken } from '../contracts/diagnostics.js';
import { releaseBootMemory } from './boot-heap.js';
import { applyRuntimeFlags } from './node-flags.js';
import { ExpiryWatchers, KernelConfigToken, LifecycleToken, LoggerToken, PipelineToken, type Lifecycle } from './lifecycle.js';

export interface ServiceOptions {
  env?: NodeJS.ProcessEnv;
  /** Config merged over file and environment (tests: port 0, data dir, plugin switches). */
  overrides?: Record<string, unknown>;
  logSink?: LogSink;
  /**
   * Before listening, give back the memory start-up left committed (boot-heap.ts). `svc serve`
   * sets it: a process that runs one service; tests that start many in one process do not.
   */
  releaseBootMemory?: boolean;
  /** Set node-flags.ts's runtime V8 flags once listening (`svc serve`; not in tests that run many services in one process). */
  runtimeFlags?: boolean;
}

/** The command whose words begin the command line; the longest name wins. */
function matchCommand<T extends { c: { name: string } }>(all: T[], words: string[]): T | undefined {
  return all.filter(({ c }) => c.name.split(' ').every((w, i) => words[i] === w)).sort((a, b) => b.c.name.length - a.c.name.length)[0];
}

export const version: string = (JSON.parse(readFileSync(resolvePath(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * One running service: config, logger, store, cache, plugins and the HTTP front, started in that
 * order and stopped in reverse. Tests start several in one process, each with its own container.
 */
export class Service {
  readonly container: DependencyContainer = createRootContainer();
  readonly config: KernelConfig;
  readonly log: Logger;
  readonly pipeline = new Pipeline();
  readonly health: HealthRegistry;
  private readonly loaded: LoadedConfig;
  private http!: HttpFront;
  private store?: Store;
  private cache?: CachePort;
  private dependencies?: Dependencies;
  private commits?: GroupCommit;
  private plugins: Array<{ loaded: LoadedPlugin; ctx: PluginContext }> = [];
  private loadedPlugins?: LoadedPlugin[];
  private readonly expiry = new AbortController();
  private lifecycle = { stopping: false, expired: this.expiry.signal, expiry: new ExpiryWatchers(this.expiry.signal) };
  private stopped?: Promise<void>;
  private starting?: Promise<number>;
  port = 0;

  constructor(private readonly options: ServiceOptions = {}) {
    this.loaded = loadConfig(options.env ?? process.env, options.overrides);
    this.config = this.loaded.config;
    this.log = createLogger(this.config.log.level, options.logSink);
    this.health = new HealthRegistry(2000, (component, result) => {
      // The database and cache log their own state changes (kernel/health/dependency.ts).
      if (component === 'database' || component === 'cache') return;
      if (result.status === 'down') this.log.warn('health.dependency_down', { component, error_code: result.error_code ?? 'error' });
      else this.log.info('health.dependency_up', { component });
    });
  }

  get shape(): 'embedded' | 'scale-out' {
    return this.config.database.url || this.config.cache.url ? 'scale-out' : 'embedded';
  }

  /** Boots everything and listens; resolves with the bound port. */
  start(): Promise<number> {
    this.starting ??= this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<number> {
    const names = await this.boot();
    if (this.options.releaseBootMemory) releaseBootMemory();
    this.port = await this.http.listen(this.config.server.port, this.config.server.host);
    const nodeFlags = this.options.runtimeFlags ? applyRuntimeFlags() : undefined;
    this.log.info('api.started', { host: this.config.server.host, port: this.port, shape: this.shape, plugins: names, version, ...(nodeFlags ? { node_flags: nodeFlags } : {}) });
    if (names.includes('admin-ui')) this.log.info('api.admin_ui', { url: uiUrl(this.config.server.host, this.port) });
    return this.port;
  }

  /**
   * Runs a plugin's `svc` subcommand against a booted service that does not listen.
   * `words` are the command line after `svc`; the longest matching command name wins.
   */
  async runCommand(words: string[], out: NodeJS.WritableStream): Promise<void> {
    const own = matchCommand((await loadPlugins(this.config, this.loaded.baseDir)).flatMap((l) => (l.plugin.commands ?? []).filter((c) => c.standalone).map((c) => ({ c, l }))), words);
    if (own) {
      await own.c.run(this.contextFor(own.l), words.slice(own.c.name.split(' ').length), out);
      return;
    }
    try {
      await this.boot();
    } catch (err) {
      // Plugins loaded but the store or a plugin failed: a command that can answer without them does.
      const found = (this.loadedPlugins ?? []).flatMap((l) => l.plugin.commands ?? []).filter((c) => c.name.split(' ').every((w, i) => words[i] === w));
      const fallback = found.sort((a, b) => b.name.length - a.name.length)[0];
      await this.stop().catch(() => {});
      if (!fallback?.whenBootFails) throw err;
      const plugins = this.loadedPlugins!.map((l) => l.plugin.name);
      await fallback.whenBootFails({ kernel: this.config, env: this.loaded.env, plugins, error: err as Error }, words.slice(fallback.name.split(' ').length), out);
      return;
    }
    try {
      const all = this.plugins.flatMap(({ loaded, ctx }) => (loaded.plugin.commands ?? []).map((c) => ({ c, ctx })));
      const match = matchCommand(all, words);
      if (!match) {
        const list = all.map(({ c }) => `  svc ${c.name.padEnd(28)} ${c.summary}`).join('\n');
        throw new Error(`unknown command "svc ${words.join(' ')}"; commands:\n  svc serve${' '.repeat(23)} start the service\n${list}`);
      }
      await match.c.run(match.ctx, words.slice(match.c.name.split(' ').length), out);
    } finally {
      await this.stop();
    }
  }

  /** Plugins loaded, store migrated, cache open, every plugin registered and started; not listening. */
  private async boot(): Promise<string[]> {
    const loaded = await loadPlugins(this.config, this.loaded.baseDir);
    this.loadedPlugins = loaded;
    const names = loaded.map((l) => l.plugin.name);
    this.log.debug('plugin.order', { plugins: names });
    const c = this.container;
    provide(c, KernelConfigToken, this.config);
    provide(c, LoggerToken, this.log);
    provide(c, PipelineToken, this.pipeline);
    provide(c, HealthToken, this.health);
    provide(c, LifecycleToken, this.lifecycle as Lifecycle);
    provide(c, PluginOrderToken, names);

    this.store = await openStore(this.config, loaded.flatMap((l) => (l.plugin.entities ?? []) as EntitySchema[]));
    const applied = await migrate(this.store, loaded.flatMap((l) => l.plugin.migrations ?? []));
    if (applied.length > 0) this.log.info('store.migrated', { applied, dialect: this.store.dialect });
    this.cache = await openCache(this.config);
    // Every call plugins make gets a deadline; the answers decide whether the service is down.
    this.dependencies = criticalDependencies(this.config, this.store, this.cache, this.log);
    this.store = guardStore(this.store, this.dependencies.database);
    if (this.cache.kind === 'redis') this.cache = guardCache(this.cache, this.dependencies.cache);
    provide(c, StoreToken, this.store);
    provide(c, CacheToken, this.cache);
    provide(c, DependenciesToken, this.dependencies);
    this.commits = new GroupCommit(this.store, this.log, 250, 200, this.config.database.commitDelayMs);
    provide(c, GroupCommitToken, this.commits);
    const commits = this.commits;
    this.pipeline.enqueue = (waiter) => commits.enqueue(waiter);
    this.health.add('database', this.dependencies.database.check, true);
    this.health.add('cache', this.dependencies.cache.check, true);
    this.dependencies.database.start();
    this.dependencies.cache.start();

    this.http = new HttpFront(this.config.server, this.log);
    for (const l of loaded) {
      const ctx = this.contextFor(l);
      this.plugins.push({ loaded: l, ctx });
      await l.plugin.register(ctx);
    }
    for (const { loaded: l, ctx } of this.plugins) await l.plugin.start?.(ctx);
    return names;
  }

  private contextFor(l: LoadedPlugin): PluginContext {
    const name = l.plugin.name;
    const child = this.container.createChildContainer();
    return {
      name,
      config: l.config,
      kernel: this.config,
      env: this.loaded.env,
      log: this.log,
      container: child,
      provide: (token, value) => provide(this.container, token, value),
      use: (token) => {
        const v = tryResolve(this.container, token);
        if (v === undefined) throw new Error(`plugin "${name}" uses ${token.id}, which no started plugin provides; add its plugin to dependsOn`);
        return v;
      },
      optional: (token) => tryResolve(this.container, token),
      hook: (phase, fn) => this.pipeline.add(phase, name, fn),
      route: (method, path, handler, options) => this.http.route(method, path, handler, options),
      health: (component, check, options) => this.health.add(component, check, options?.critical ?? false),
      healthComponents: (list) => this.health.addDynamic(list),
    };
  }

  /** Graceful stop: refuse new requests, let in-flight ones finish up to the grace time, then stop plugins in reverse. */
  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    this.lifecycle.stopping = true;
    // A stop signal during start-up waits for it: closing the store under a running migration
    // would fail start-up with a confusing error instead of stopping cleanly.
    await this.starting?.catch(() => {});
    if (this.http) {
      this.log.info('api.stopping', { in_flight: this.http.active });
      this.http.drain();
      const idle = await this.http.waitIdle(this.config.server.shutdownGraceMs);
      let forced = 0;
      if (!idle) {
        forced = this.http.active;
        this.expiry.abort();
        await this.http.waitIdle(2000);
      }
      this.http.closeAll();
      this.log.info('api.stopped', { forced_streams: forced });
    }
    // Charges of requests that ended are committed (and their counters moved) before plugins stop
    // and the store closes: first every settle under way, then anything still queued. One grace
    // for both: a database that stopped answering must not double the time a stop takes.
    const graceEnds = Date.now() + this.config.server.shutdownGraceMs;
    await this.pipeline.settled(this.config.server.shutdownGraceMs);
    await this.commits?.close(Math.max(0, graceEnds - Date.now()));
    for (const { loaded: l, ctx } of [...this.plugins].reverse()) {
      try {
        await l.plugin.stop?.(ctx);
      } catch {
        // A plugin that fails to stop must not keep the others from flushing.
      }
    }
    this.dependencies?.database.stop();
    this.dependencies?.cache.stop();
    await this.cache?.close().catch(() => {});
    await this.store?.close().catch(() => {});
  }

  /** A shared service, for tests and the CLI. */
  get<T>(token: import('../container/tokens.js').Token<T>): T {
    return resolve(this.container, token);
  }
}

/** The address a browser on this machine opens: a wildcard host is reached as localhost. */
export function uiUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}/`;
}
