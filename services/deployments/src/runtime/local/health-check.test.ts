import { healthPollDelay } from './health-check';

describe('healthPollDelay', () => {
  it('probes a starting copy every 5 ms in its first second, then every 25 ms, then every 100 ms', () => {
    expect([0, 999, 1_000, 4_999, 5_000, 60_000].map(healthPollDelay)).toEqual([
      5, 5, 25, 25, 100, 100,
    ]);
  });
});
