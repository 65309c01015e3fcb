import type { LaunchedProcess } from './launcher';

/**
 * starting: started, waiting for the release's health gate. running: serving (the router may
 * send it requests). restarting: exited, started again after a backoff. crashed: gave up
 * restarting it. stopped: its release was stopped.
 */
export type CopyState = 'starting' | 'running' | 'restarting' | 'crashed' | 'stopped';

/** What the control API says of one copy of a release. */
export interface CopyInfo {
  /** Its place among the release's copies, from 0. */
  index: number;
  state: CopyState;
  pid: number | null;
  /** Where the router reaches it: its sandbox's own address, and its PORT. */
  host: string;
  port: number;
  restarts: number;
}

/**
 * One of a release's `replicas` copies: a sandboxed process of its own, with its own address,
 * restarted on its own after a crash (crash-restarts.ts) while the others keep serving.
 */
export class Copy {
  state: CopyState = 'starting';
  process: LaunchedProcess | null = null;
  /** Where its app is reached (its sandbox's address and PORT); empty until it started. */
  host = '';
  port = 0;
  restarts = 0;
  restartTimes: number[] = [];
  /** The restart due after a crash, until it starts or the release stops. */
  restartTimer?: NodeJS.Timeout;

  constructor(
    readonly index: number,
    private readonly of: number,
  ) {}

  /** How its release log's lines name it: `copy 2 of 3: `; nothing when it is the only one. */
  get label(): string {
    return this.of > 1 ? `copy ${this.index + 1} of ${this.of}: ` : '';
  }

  /** Whether the router may send it a request. */
  get serving(): boolean {
    return this.state === 'running' && this.process !== null;
  }

  info(): CopyInfo {
    return {
      index: this.index,
      state: this.state,
      pid: this.process?.pid ?? null,
      host: this.host,
      port: this.port,
      restarts: this.restarts,
    };
  }
}
