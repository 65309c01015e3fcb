/** What the runtime asks a launcher to run: one long-running app process. */
export interface LaunchSpec {
  /** The release's directory (the kept build), read-only to the app; nothing outside it is the app's. */
  workspace: string;
  /** Where the command runs: the workspace or a directory inside it (rootDirectory). */
  cwd: string;
  /** Run with `sh -c`. */
  command: string;
  /** The app's environment; the launcher adds `PORT`, where the app must listen. */
  env: Record<string, string>;
  /** Everything the process prints, stdout and stderr interleaved, as it comes. */
  onOutput: (chunk: string) => void;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The limit the app went past, when one ended it (its log names it). */
  limit?: string;
}

/** A started app process. */
export interface LaunchedProcess {
  pid: number;
  /** Where the app is reached: its address (its sandbox's own) and the PORT it was given. */
  host: string;
  port: number;
  /** Settles once the process (and its process group) is gone, however it ended. */
  exited: Promise<ExitStatus>;
  /** SIGTERM to all its processes, SIGKILL after `graceMs` at most; resolves once it exited. */
  stop(graceMs: number): Promise<ExitStatus>;
}

/**
 * Starts app processes: the Supervisor knows only this. The supervisor process uses
 * `sandboxLauncher` (sandbox-launcher.ts): bubblewrap, or plain processes when the sandbox is
 * made with SANDBOX=none (development only).
 */
export interface Launcher {
  start(spec: LaunchSpec): Promise<LaunchedProcess>;
}
