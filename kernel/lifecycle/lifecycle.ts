import { defineToken } from '../container/tokens.js';

/**
 * Shutdown state that long-running work watches. `stopping` flips when SIGTERM arrives; `expired`
 * aborts when the in-flight grace (20 s) is over, so streams still running end with a final
 * server_shutting_down event.
 */
export interface Lifecycle {
  readonly stopping: boolean;
  readonly expired: AbortSignal;
}

export const LifecycleToken = defineToken<Lifecycle>('kernel.lifecycle');
export const KernelConfigToken = defineToken<import('../config/schema.js').KernelConfig>('kernel.config');
export const LoggerToken = defineToken<import('../log/logger.js').Logger>('kernel.logger');
export const PipelineToken = defineToken<import('../pipeline/pipeline.js').Pipeline>('kernel.pipeline');
