import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once `child` prints `marker` on stdout or stderr (a starter's "ready" line); rejects
 * with the end of what it printed if it exits first or `timeoutMs` passes. `what` names it in
 * those errors: "the stack".
 */
export function waitForOutput(
  child: ChildProcess,
  marker: string,
  { timeoutMs, what }: { timeoutMs: number; what: string },
): Promise<void> {
  let output = '';
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      if (output.includes(marker)) settle();
    };
    const onExit = (code: number | null) =>
      settle(new Error(`${what} exited with ${code}:\n${output}`));
    const timer = setTimeout(
      () => settle(new Error(`${what} was not ready in time:\n${output}`)),
      timeoutMs,
    );
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}
