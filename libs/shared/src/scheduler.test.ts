import { pino } from 'pino';
import { Scheduler } from './scheduler';

const logger = pino({ level: 'silent' });

describe('Scheduler', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs a task every interval, and a failing run does not stop it', async () => {
    const scheduler = new Scheduler(logger);
    let runs = 0;
    scheduler.every({
      name: 'flaky',
      everyMs: 1_000,
      run: async () => {
        runs++;
        throw new Error('fails every time');
      },
    });
    await jest.advanceTimersByTimeAsync(999);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(2_001);
    expect(runs).toBe(3);
    await scheduler.stop();
  });

  it('skips a tick while the previous run of the task is still going', async () => {
    const scheduler = new Scheduler(logger);
    let started = 0;
    let release = () => {};
    scheduler.every({
      name: 'slow',
      everyMs: 1_000,
      run: () => {
        started++;
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(started).toBe(1);
    release();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(started).toBe(2);
    release();
    await scheduler.stop();
  });

  it('stop() waits for the run in progress, and no run starts after it', async () => {
    const scheduler = new Scheduler(logger);
    let started = 0;
    let finished = false;
    let release = () => {};
    scheduler.every({
      name: 'held',
      everyMs: 1_000,
      run: async () => {
        started++;
        await new Promise<void>((resolve) => (release = resolve));
        finished = true;
      },
    });
    await jest.advanceTimersByTimeAsync(1_000);
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(started).toBe(1);
  });

  it('runs a task at once as well when asked to, then every interval', async () => {
    const scheduler = new Scheduler(logger);
    let runs = 0;
    scheduler.every({ name: 'prune', everyMs: 60_000, runAtStart: true, run: async () => runs++ });
    await jest.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(runs).toBe(2);
    await scheduler.stop();
  });
});
