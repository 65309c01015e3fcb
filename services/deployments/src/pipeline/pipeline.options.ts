import type { Logger, OutboxWriter } from '@platform/shared';
import type { AccountLimitSettings } from '../deployments/account-limits';
import type { LogAppended } from '../deployments/log-notices';
import type { Models } from '../models';
import type { DeploymentSteps } from './deployment-steps';

/** What a pipeline worker and each deployment it runs are given (compose.ts). */
export interface PipelineWorkerOptions {
  models: Models;
  logger: Logger;
  /** Told about every status change recorded (the outbox relay). */
  outbox: OutboxWriter;
  /** What BUILDING and DEPLOYING do (steps.ts). */
  steps: DeploymentSteps;
  logLimitBytes: number;
  /** LOG_LINE_MAX_BYTES: longer lines of a step's output are cut. */
  logLineMaxBytes: number;
  /** LOG_FLUSH_DELAY: the longest a printed line waits to share a write with others. */
  logFlushDelayMs: number;
  /** Told of every append to a run's log (LogNotices: the followers of every replica). */
  logAppended?: LogAppended;
  concurrency: number;
  /** ACCOUNT_MAX_BUILDS and ACCOUNT_MAX_APPS: what one account may run at once. */
  accountLimits: AccountLimitSettings;
  /** A claim not renewed for this long is taken over by another worker. */
  leaseMs: number;
  /** How often the lease is renewed and a cancel noticed (output is written as it comes). */
  heartbeatMs: number;
  /** How often to look for work when nobody called wake(). */
  pollIntervalMs: number;
}
