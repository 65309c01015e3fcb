import { afterCrash } from './crash-restarts';

const policy = { initialDelayMs: 100, maxDelayMs: 350, limit: 3, windowMs: 10_000 };

describe('what follows a crash', () => {
  it('restarts with a doubling delay up to its maximum, then gives up past the limit', () => {
    const times: number[] = [];

    const answers = [0, 1, 2, 3].map((t) => afterCrash(policy, times, t));

    expect(answers).toEqual([
      { restart: true, delayMs: 100, count: 1 },
      { restart: true, delayMs: 200, count: 2 },
      { restart: true, delayMs: 350, count: 3 },
      { restart: false, why: 'crashed 4 times within 10000 ms: not restarted again' },
    ]);
  });

  it('counts only the restarts within the window', () => {
    const times = [0, 1, 2];

    expect(afterCrash(policy, times, 10_002)).toEqual({ restart: true, delayMs: 100, count: 1 });
    expect(times).toEqual([10_002]);
  });
});
