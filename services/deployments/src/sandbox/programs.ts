import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Looks a program up the way a shell does; undefined when it is nowhere. */
export function findProgram(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : [...searchPath.split(':').filter(Boolean), '/usr/bin', '/usr/sbin', '/bin', '/sbin'].map(
        (dir) => path.join(dir, name),
      );
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * A program of the system: under /usr (which a sandbox binds read-only, so the sandbox can run it
 * inside too), else /sbin or /bin.
 */
export function findSystemProgram(name: string): string | undefined {
  for (const dir of ['/usr/bin', '/usr/sbin', '/sbin', '/bin']) {
    const found = findProgram(path.join(dir, name));
    if (found) return found;
  }
  return undefined;
}
