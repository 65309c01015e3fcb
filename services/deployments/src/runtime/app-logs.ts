import type { ReleaseState } from './local/release';

/**
 * What the pipeline reads of the apps a runtime runs: which releases there are, and what each
 * printed. The deploy step follows a starting release's output into its deployment's log
 * (pipeline/release-log-follower.ts), LiveLogs a deployed one's (pipeline/live-logs.ts). The local
 * runtime's `RuntimeClient` is one (byte offsets into the supervisor's release log);
 * `KubernetesAppLogs` (kubernetes/app-logs.ts) another (a release is a Deployment's pods, the
 * offset a time).
 */
export interface AppLogs {
  /** The releases the runtime runs; `live` is the one a service's URL serves. */
  list(): Promise<AppRelease[]>;

  /**
   * What the release printed after `offset` (0: from its start), and where to read on from: an
   * offset only this runtime gives meaning to. `text` may end in a line not yet ended only where
   * offsets count bytes (that line starts at `nextOffset` minus its UTF-8 length); a runtime whose
   * offsets are anything else returns whole lines only.
   */
  readLog(releaseId: string, offset?: number): Promise<{ text: string; nextOffset: number }>;
}

/** A release as AppLogs lists it. */
export interface AppRelease {
  releaseId: string;
  state: ReleaseState;
}
