import { z } from 'zod';
import { durationEnv, durationListEnv, parseDuration } from './durations';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['45s', 45_000],
    ['90m', 5_400_000],
    ['12h', 43_200_000],
    ['30d', 2_592_000_000],
    ['1.5h', 5_400_000],
    [' 5 m ', 300_000],
  ])('reads %j as %d ms', (text, expected) => {
    expect(parseDuration(text)).toBe(expected);
  });

  it.each(['', '3600', '5 fortnights', '-5s', '0s', 'm', '5s5m'])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });
});

describe('durationEnv', () => {
  const schema = z.object({ TTL: durationEnv('10m', { min: '1s', max: '1d' }) });

  it('takes the default when the variable is unset', () => {
    expect(schema.parse({}).TTL).toBe(600_000);
  });

  it('says what a duration looks like when given a bare number', () => {
    expect(() => schema.parse({ TTL: '3600' })).toThrow(/such as 500ms, 45s/);
  });

  it('refuses values outside its bounds, naming the bound', () => {
    expect(() => schema.parse({ TTL: '2d' })).toThrow(/at most 1d/);
    expect(() => schema.parse({ TTL: '10ms' })).toThrow(/at least 1s/);
  });
});

describe('durationListEnv', () => {
  const schema = z.object({ SCHEDULE: durationListEnv('5s,5m') });

  it('reads each item in order', () => {
    expect(schema.parse({ SCHEDULE: '1s, 2m,3h' }).SCHEDULE).toEqual([1_000, 120_000, 10_800_000]);
    expect(schema.parse({}).SCHEDULE).toEqual([5_000, 300_000]);
  });

  it('refuses a list with any item that is not a duration', () => {
    expect(() => schema.parse({ SCHEDULE: '5s,,5m' })).toThrow(/each item/);
  });
});
