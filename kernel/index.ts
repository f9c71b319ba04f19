/**
 * The kernel's public surface. Plugins and providers import from here only, never from each
 * other; they meet through the typed tokens exported below and in kernel/contracts.
 */
export { defineToken, type Token, type DependencyContainer } from './container/tokens.js';
export { definePlugin, type Plugin, type PluginContext, type PluginCommand } from './plugin/define.js';
export { phaseNames, type PhaseName, type PhaseHooks, type Compensation } from './pipeline/phases.js';
export { newRequestContext, stageDurable, type RequestContext } from './pipeline/context.js';
export { compensate, type Pipeline, type SettleError } from './pipeline/pipeline.js';
export { Roster } from './pipeline/roster.js';
export { withItem } from './lists.js';
export { ChurnMap } from './pipeline/churn-map.js';
export { errorTable, GatewayError, isGatewayError, toGatewayError, describeFailure, type ErrorCode, type ErrorDetails } from './errors/index.js';
export type { LogEvents, LogValue } from './log/events.js';
export { createLogger, type Logger } from './log/logger.js';
export type { RouteContext, RouteHandler, HttpMethod, RouteOptions } from './http/route.js';
export { BodyReader, parseJson, type BodyLimits } from './http/body.js';
export { randomId, orderedId, orderedUuid } from './http/ids.js';
export { bearerMatches } from './http/secret.js';
export { sendJson, renderError, requestIdHeader } from './http/render.js';
export { checkCsrf, csrfHeader } from './http/csrf.js';
export { StoreToken, type Store, type Exec } from './store/orm.js';
export { BatchWriter, type Row } from './store/batch-writer.js';
export { SnapshotSync, type SnapshotSyncOptions } from './sync/snapshot-sync.js';
export type { Migration, Dialect } from './store/migrations.js';
export { CacheToken, CountersMissing, type CachePort, type ReserveLine, type ReserveResult, type AdjustLine, type AdjustCall, type Tracked, type Untrack } from './cache/port.js';
export { HealthToken, type HealthCheck, type CheckResult, type HealthReport } from './health/registry.js';
export { LifecycleToken, KernelConfigToken, LoggerToken, PipelineToken, type Lifecycle } from './lifecycle/lifecycle.js';
export type { KernelConfig } from './config/schema.js';
export * from './contracts/index.js';
export { Type, type Static, type TSchema } from '@sinclair/typebox';
export { defineEntity, p } from '@mikro-orm/core';
export { DependenciesToken, Dependency, type Dependencies } from './health/dependency.js';
export { Throttled } from './log/throttle.js';
export { GroupCommitToken, GroupCommit, type CommitWaiter, type DurableWrite, type InsertRows, type AddToTotals, type TotalAfter, type TotalsTable, type AfterCommit, type GroupStep } from './store/group-commit.js';
export * from './upstream/index.js';
