import { readFile } from 'node:fs/promises';
import { runProgram } from '../process/run-program';

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo, octal escapes read). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  const points = table
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point)
    .map((point) =>
      point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))),
    )
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/**
 * Unmounts every filesystem mounted at or under `dir` (builds' disks): before `dir` is deleted,
 * since deleting through a mount empties the mounted filesystem and leaves its mount point.
 */
export async function unmountUnder(dir: string): Promise<void> {
  for (const point of await mountsUnder(dir)) await runProgram('umount', ['--', point]);
}
