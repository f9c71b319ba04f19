import type { Logger } from '../../kernel/index.js';
import type { Classification, LocalClassifier, RouteText } from './classifier/index.js';
import { existsSync } from 'node:fs';
import { createClassifier } from './classifier/index.js';
import { studentDir } from './classifier/student.js';
import type { Route } from './snapshot.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'routing.classifier_ready': { load_ms: number; encoder: string };
    'routing.classifier_unavailable': { error_code: string };
    'routing.classify_failed': { request_id: string; error_code: string };
  }
}

/** The built-in student table's files are where the package ships them. */
const builtInPresent = (): boolean => ['table.bin', 'vocab.txt'].every((f) => existsSync(new URL(f, studentDir)));

export interface ClassifierConfig {
  enabled: boolean;
  onnxDir?: string;
}

/**
 * Owns the classifier's lifetime for the plugin: loads it (the built-in student table in well
 * under a second, on this thread: at start when a route exists, else when the first `auto` request
 * asks; an ONNX encoder in its worker, in the background from start), reports its state to
 * /healthz, and turns any failure into "not available" so `auto` falls to the default with
 * `classifier_unavailable` only when no decision can be made.
 */
export class ClassifierHost {
  private classifier: LocalClassifier | null = null;
  private failed = false;
  private loading: Promise<void> | null = null;
  private closing = false;
  /** The built-in table, not loaded yet because no route needed it (it loads on the first ask). */
  private deferred: ClassifierConfig | null = null;

  constructor(private readonly log: Logger) {}

  get state(): 'loading' | 'ready' | 'unavailable' {
    if (this.failed) return 'unavailable';
    // Deferred, the built-in table is a fraction of a second from a decision: ready to decide.
    if (this.deferred) return 'ready';
    return this.classifier?.state ?? 'loading';
  }

  /**
   * The built-in table is loaded on the first ask instead of now (an instance without routes does
   * not hold it: bench/README.md "Idle memory"). Its files are checked now, so a missing table still
   * shows as unavailable at start.
   */
  defer(options: ClassifierConfig): void {
    if (!options.enabled || options.onnxDir || !builtInPresent()) return void this.load(options);
    this.deferred = options;
  }

  get encoder(): string | null {
    return this.classifier?.encoder ?? null;
  }

  /** Loads once; resolves when loading ended, well or not. */
  load(options: ClassifierConfig): Promise<void> {
    this.deferred = null;
    this.loading ??= (async () => {
      const started = performance.now();
      try {
        if (!options.enabled) throw Object.assign(new Error('classifier turned off in config'), { code: 'disabled' });
        const c = createClassifier(options.onnxDir ? { onnxDir: options.onnxDir } : {});
        this.classifier = c;
        await c.ready();
        if (c.state !== 'ready') throw Object.assign(new Error(c.failure ?? 'classifier did not load'), { code: 'load_failed' });
        this.log.info('routing.classifier_ready', { load_ms: Math.round(performance.now() - started), encoder: c.encoder });
      } catch (err) {
        this.failed = true;
        if (this.closing) return; // stopped while loading: not a failure worth a log line
        const code = (err as { code?: unknown }).code;
        this.log.warn('routing.classifier_unavailable', { error_code: typeof code === 'string' ? code : 'load_failed' });
      }
    })();
    return this.loading;
  }

  /** Scores the text against the routes, or null when the classifier cannot be asked. */
  async classify(text: string, routes: Route[], requestId: string): Promise<Classification | null> {
    if (this.deferred) await this.load(this.deferred);
    if (this.state !== 'ready' || !this.classifier) return null;
    const texts: RouteText[] = routes.map((r) => ({ name: r.name, version: r.version, description: r.description, examples: r.examples }));
    try {
      return await this.classifier.classify(text, texts);
    } catch (err) {
      this.log.warn('routing.classify_failed', { request_id: requestId, error_code: String((err as { code?: string }).code ?? 'error') });
      return null;
    }
  }

  /** Ends the classifier at once, loaded or not (stop must not wait for a model still loading). */
  async close(): Promise<void> {
    this.closing = true;
    await this.classifier?.close().catch(() => {});
    await this.loading;
  }
}
