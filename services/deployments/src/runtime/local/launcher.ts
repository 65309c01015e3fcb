import { spawn } from 'node:child_process';

/** What the runtime asks a launcher to run: one long-running app process. */
export interface LaunchSpec {
  /** The release's directory (the kept build); nothing outside it is the app's. */
  workspace: string;
  /** Where the command runs: the workspace or a directory inside it (rootDirectory). */
  cwd: string;
  /** Run with `sh -c`. */
  command: string;
  /** The app's whole environment: nothing of the launcher's own is added. */
  env: Record<string, string>;
  /** Everything the process prints, stdout and stderr interleaved, as it comes. */
  onOutput: (chunk: string) => void;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started app process. */
export interface LaunchedProcess {
  pid: number;
  /** Settles once the process (and its process group) is gone, however it ended. */
  exited: Promise<ExitStatus>;
  /** SIGTERM to its whole process group, SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs: number): Promise<ExitStatus>;
}

/**
 * Starts app processes. The runtime only knows this interface: at integration the sandbox
 * (`src/sandbox/`, bubblewrap with limits) is adapted to it, and `childProcessLauncher` stays
 * the development fallback.
 */
export interface Launcher {
  start(spec: LaunchSpec): Promise<LaunchedProcess>;
}

/**
 * DEVELOPMENT FALLBACK, NOT A SANDBOX: a plain child process in its own process group, with
 * only the environment it is given. It sees the machine's files and processes like any local
 * program; the pipeline must refuse tenant code with it unless development explicitly allows.
 */
export const childProcessLauncher: Launcher = {
  start(spec) {
    const child = spawn('sh', ['-c', spec.command], {
      cwd: spec.cwd,
      env: spec.env,
      // Its own process group, so a stop reaches what `sh -c` started too.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        const pid = child.pid!;
        child.stdout.setEncoding('utf8').on('data', spec.onOutput);
        child.stderr.setEncoding('utf8').on('data', spec.onOutput);
        const exited = new Promise<ExitStatus>((done) =>
          child.once('exit', (code, signal) => done({ code, signal })),
        );
        const signalGroup = (signal: NodeJS.Signals) => {
          try {
            process.kill(-pid, signal);
          } catch {
            // The group is gone already.
          }
        };
        resolve({
          pid,
          exited,
          async stop(graceMs) {
            signalGroup('SIGTERM');
            const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
            const status = await exited;
            clearTimeout(timer);
            // What the app left behind in its group goes with it.
            signalGroup('SIGKILL');
            return status;
          },
        });
      });
    });
  },
};
