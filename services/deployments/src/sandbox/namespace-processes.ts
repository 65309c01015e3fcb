import { readdir, readlink } from 'node:fs/promises';

/** The PID namespace of a process (`pid:[4026532179]`), or undefined once it is gone. */
export async function pidNamespaceOf(pid: number): Promise<string | undefined> {
  return readlink(`/proc/${pid}/ns/pid`).catch(() => undefined);
}

/** Host pids of every process in the PID namespace `namespace`. */
export async function processesIn(namespace: string): Promise<number[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const pids: number[] = [];
  await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        if ((await pidNamespaceOf(Number(name))) === namespace) pids.push(Number(name));
      }),
  );
  return pids;
}

export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
