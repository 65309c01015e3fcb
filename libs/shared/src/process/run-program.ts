import { spawn } from 'node:child_process';

/** A program that exited non-zero: its stderr says why. */
export class ProgramError extends Error {
  override name = 'ProgramError';
  constructor(
    readonly file: string,
    readonly args: readonly string[],
    readonly stderr: string,
  ) {
    super(`${file} ${args.join(' ')}: ${stderr}`);
  }
}

/**
 * Runs a system program to its end with only a system PATH in its environment, `input` on its
 * stdin; rejects with a ProgramError (its stderr) when it exits non-zero.
 */
export function runProgram(file: string, args: string[], input = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    let errors = '';
    const child = spawn(file, args, {
      stdio: ['pipe', 'ignore', 'pipe'],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new ProgramError(file, args, errors.trim())),
    );
    // A program that exits without reading its stdin closes the pipe under us.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
