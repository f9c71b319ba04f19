import type { Logger } from '../../kernel/index.js';
import type { Classification, LocalClassifier, RouteText } from './classifier/index.js';
import { createClassifier } from './classifier/index.js';
import type { Route } from './snapshot.js';

declare module '../../kernel/index.js' {
  interface LogEvents {
    'routing.classifier_ready': { load_ms: number; encoder: string };
    'routing.classifier_unavailable': { error_code: string };
    'routing.classify_failed': { request_id: string; error_code: string };
  }
}

export interface ClassifierConfig {
  enabled: boolean;
  onnxDir?: string;
}

/**
 * Owns the classifier's lifetime for the plugin: loads it at start (the built-in student table in
 * well under a second, on this thread; an ONNX encoder in its worker, in the background), reports
 * its state to /healthz, and turns any failure into "not available" so `auto` falls to the
 * default with `classifier_unavailable` only when no decision can be made.
 */
export class ClassifierHost {
  private classifier: LocalClassifier | null = null;
  private failed = false;
  private loading: Promise<void> | null = null;
  private closing = false;

  constructor(private readonly log: Logger) {}

  get state(): 'loading' | 'ready' | 'unavailable' {
    if (this.failed) return 'unavailable';
    return this.classifier?.state ?? 'loading';
  }

  get encoder(): string | null {
    return this.classifier?.encoder ?? null;
  }

  /** Loads once; resolves when loading ended, well or not. */
  load(options: ClassifierConfig): Promise<void> {
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
