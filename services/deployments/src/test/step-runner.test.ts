import { waitFor } from '@platform/shared/testing';
import { isProcessRunning, useFixtureSteps } from './processes';
import { startStep, type StepOptions } from './step-runner';

const steps = useFixtureSteps();
const PATH_ONLY = { PATH: process.env.PATH ?? '' };

function run(command: string, overrides: Partial<StepOptions> = {}) {
  let output = '';
  const step = startStep({
    command,
    env: PATH_ONLY,
    timeoutMs: 10_000,
    killGraceMs: 500,
    onOutput: (text) => (output += text),
    ...overrides,
  });
  return { step, output: () => output };
}

describe('startStep', () => {
  it('succeeds on exit code 0 with stdout and stderr collected', async () => {
    const { step, output } = run('echo "to stdout $EXTRA"; echo to stderr >&2', {
      env: { ...PATH_ONLY, EXTRA: 'héllo' },
    });
    expect(await step.result).toEqual({ outcome: 'succeeded' });
    expect(output()).toContain('to stdout héllo\n');
    expect(output()).toContain('to stderr\n');
  });

  it('fails with the exit code of the command', async () => {
    const { step, output } = run('echo broken; exit 3');
    expect(await step.result).toEqual({ outcome: 'failed', exitCode: 3, signal: null });
    expect(output()).toBe('broken\n');
  });

  it('gives the command only the environment it was handed', async () => {
    const { step, output } = run('echo "secret=[${INTERNAL_SECRET:-}] path=[${PATH:+set}]"');
    await step.result;
    expect(output()).toBe('secret=[] path=[set]\n');
  });

  it('stops the whole process group when the time limit passes', async () => {
    const name = `timeout-${Date.now()}`;
    const { step } = run(steps.longStep, {
      timeoutMs: 800,
      env: { ...PATH_ONLY, DEPLOYMENT_ID: name },
    });
    const pids = await steps.pidsOf(name);
    expect(pids).toHaveLength(2);
    expect(await step.result).toEqual({ outcome: 'timed-out' });
    for (const pid of pids) expect(await isProcessRunning(pid)).toBe(false);
  });

  it('kills with SIGKILL a step that ignores SIGTERM once the grace period is over', async () => {
    const name = `stubborn-${Date.now()}`;
    const { step, output } = run(steps.stubbornStep, {
      env: { ...PATH_ONLY, DEPLOYMENT_ID: name },
    });
    const [pid] = await steps.pidsOf(name);
    const started = Date.now();
    await step.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(await step.result).toEqual({ outcome: 'stopped' });
    await waitFor(async () => !(await isProcessRunning(pid!)), {
      what: 'the stubborn step to die',
    });
    expect(output()).toContain('ignoring SIGTERM');
  });
});
