import { spawn } from 'node:child_process';
import { waitForOutput } from './processes';

/** A node process running `script`, its output piped. */
const node = (script: string) =>
  spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });

describe('waitForOutput', () => {
  it('resolves once the marker is printed, on stderr as on stdout, even split across writes', async () => {
    const child = node(
      "process.stdout.write('starting\\n'); process.stderr.write('Platform re'); setTimeout(() => process.stderr.write('ady at :80\\n'), 50); setTimeout(() => {}, 5000)",
    );
    try {
      await expect(
        waitForOutput(child, 'Platform ready at', { timeoutMs: 5_000, what: 'the child' }),
      ).resolves.toBeUndefined();
    } finally {
      child.kill();
    }
  });

  it('rejects with what was printed when the process exits first', async () => {
    const child = node("console.log('no luck'); setTimeout(() => process.exit(3), 100)");

    await expect(
      waitForOutput(child, 'Platform ready at', { timeoutMs: 5_000, what: 'the child' }),
    ).rejects.toThrow(/^the child exited with 3:\nno luck/);
  });

  it('rejects with what was printed when the marker does not come in time', async () => {
    const child = node("console.log('still starting'); setTimeout(() => {}, 5000)");
    try {
      await expect(
        waitForOutput(child, 'Platform ready at', { timeoutMs: 300, what: 'the child' }),
      ).rejects.toThrow(/^the child was not ready in time:\nstill starting/);
    } finally {
      child.kill();
    }
  });
});
