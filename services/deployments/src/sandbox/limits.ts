/** What one sandbox is allowed (README "The sandbox", Limits). */
export interface SandboxLimits {
  /** Wall-clock time; past it the process tree is stopped (`stoppedBy: 'timeout'`). */
  timeoutMs?: number;
  /** CPU time of each process (RLIMIT_CPU): SIGXCPU at this many seconds, SIGKILL a second later. */
  cpuSeconds?: number;
  /** Memory of all its processes together, swap included (cgroup). */
  memoryBytes: number;
  /** CPU time per wall-clock time, all its processes together (cgroup; 1 = one core). */
  cpus: number;
  /** Processes and threads at once (cgroup pids; RLIMIT_NPROC where there are no cgroups). */
  processes: number;
  /** The size of its /tmp. */
  tmpBytes: number;
}

/** The rlimits, as `prlimit` options, soft and hard, so the code cannot raise them. */
export function prlimitArgs(limits: SandboxLimits, { cgroups }: { cgroups: boolean }): string[] {
  const args = ['--core=0'];
  if (limits.cpuSeconds !== undefined) {
    const cpu = Math.max(1, Math.ceil(limits.cpuSeconds));
    args.push(`--cpu=${cpu}:${cpu + 1}`);
  }
  // Without cgroups (development only), the process count is per uid: each sandbox has its own.
  if (!cgroups) args.push(`--nproc=${Math.floor(limits.processes)}`);
  return args;
}
