import type { SandboxLimits, SandboxResult } from '../sandbox/sandbox';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const formatBytes = (bytes: number) =>
  bytes >= 1024 ** 3
    ? `${+(bytes / 1024 ** 3).toFixed(2)} GiB`
    : `${+(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** The limit a build went past, as its log names it. */
function limitName(result: SandboxResult, limits: SandboxLimits): string {
  switch (result.limit) {
    case 'memory':
      return `memory limit (${formatBytes(limits.memoryBytes)}, BUILD_MEMORY_BYTES)`;
    case 'processes':
      return `process limit (${limits.processes}, BUILD_PROCESSES)`;
    case 'cpu':
      return `CPU time limit (${limits.cpuSeconds} s, BUILD_CPU_SECONDS)`;
    default:
      return `limits (${result.signal ?? 'killed'})`;
  }
}

/** The last line of a build command's log that did not exit 0: why, and which limit if one. */
export function buildFailure(result: SandboxResult, limits: SandboxLimits): string {
  switch (result.stoppedBy) {
    case 'timeout':
      return `The build command ran longer than ${seconds(limits.timeoutMs ?? 0)} and was stopped.`;
    case 'limit':
      return `The build command went past its ${limitName(result, limits)} and was stopped.`;
    case 'cancel':
      return 'The build step was stopped.';
    default: {
      const ended = result.signal
        ? `The build command was killed by ${result.signal}`
        : `The build command failed with exit code ${result.exitCode}`;
      // A fork refused at the process limit ends a shell on its own: say which limit it met.
      return result.limit ? `${ended}: it reached its ${limitName(result, limits)}.` : `${ended}.`;
    }
  }
}

/** The last line of a build that filled its disk (BUILD_DISK_BYTES). */
export const diskFull = (diskBytes: number) =>
  `The build filled its disk: its workspace and /tmp hold ${formatBytes(diskBytes)} at most (BUILD_DISK_BYTES).`;
