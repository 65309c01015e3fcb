import { parseDuration, parseRetrySchedule, withJitter } from './retry-schedule';

describe('retry schedule', () => {
  it('parses durations in ms, s, m, h and d', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('5s')).toBe(5_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(parseDuration(' 7s ')).toBe(7_000);
  });

  it('rejects durations without a known unit or with a fraction', () => {
    for (const text of ['5', '5x', '1.5s', '-1s', 's', '', '5 s'])
      expect(parseDuration(text)).toBeNull();
  });

  it('parses the default Standard Webhooks schedule into seven waits', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  it('accepts spaces around the items', () => {
    expect(parseRetrySchedule('200ms, 200ms ,400ms')).toEqual([200, 200, 400]);
  });

  it('names the bad items of a schedule it refuses', () => {
    expect(() => parseRetrySchedule('5s,soon,0s')).toThrow(/soon, 0s/);
    expect(() => parseRetrySchedule('')).toThrow(/durations/);
    expect(() => parseRetrySchedule('5s,,5m')).toThrow(/durations/);
  });

  it('spreads a wait by at most 20 % either way', () => {
    expect(withJitter(10_000, () => 0)).toBe(8_000);
    expect(withJitter(10_000, () => 0.5)).toBe(10_000);
    expect(withJitter(10_000, () => 0.999999)).toBe(12_000);
    for (let i = 0; i < 100; i++) {
      const delay = withJitter(1_000);
      expect(delay).toBeGreaterThanOrEqual(800);
      expect(delay).toBeLessThanOrEqual(1_200);
    }
  });
});
