import { withJitter } from './retry-schedule';

describe('retry jitter', () => {
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
