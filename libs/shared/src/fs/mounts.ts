import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

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

function umount(point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let errors = '';
    const child = spawn('umount', ['--', point], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`umount ${point}: ${errors.trim()}`)),
    );
  });
}

/**
 * Unmounts every filesystem mounted at or under `dir` (builds' disks): before `dir` is deleted,
 * since deleting through a mount empties the mounted filesystem and leaves its mount point.
 */
export async function unmountUnder(dir: string): Promise<void> {
  for (const point of await mountsUnder(dir)) await umount(point);
}
