import { z } from 'zod';
import { EXAMPLE_SECRETS, baseEnv, commaList, loadConfig, parseConfig } from './config';

const schema = baseEnv.extend({
  KAFKA_BROKERS: commaList(),
  PORT: z.coerce.number().int().default(4002),
});

describe('config loading', () => {
  it('coerces, splits and defaults values into a frozen object', () => {
    const config = loadConfig(schema, {
      INTERNAL_SECRET: 'x'.repeat(32),
      KAFKA_BROKERS: ' a:9092, b:9092 ,',
      PORT: '5000',
    });
    expect(config).toEqual({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      INTERNAL_SECRET: 'x'.repeat(32),
      HOST: '127.0.0.1',
      KAFKA_BROKERS: ['a:9092', 'b:9092'],
      PORT: 5000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('prints every problem, one line each, and exits 1', () => {
    const lines: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const exit = jest.spyOn(process, 'exit').mockImplementation(((code: number) => {
      throw new Error(`exit ${code}`);
    }) as never);
    try {
      expect(() =>
        loadConfig(schema, { INTERNAL_SECRET: 'short', PORT: 'abc', LOG_LEVEL: 'loud' }),
      ).toThrow('exit 1');
      expect(lines.join('')).toMatch(/INTERNAL_SECRET: must be at least 32 characters/);
      expect(lines.some((l) => l.startsWith('config: KAFKA_BROKERS:'))).toBe(true);
      expect(lines.some((l) => l.startsWith('config: PORT:'))).toBe(true);
      expect(lines.some((l) => l.startsWith('config: LOG_LEVEL:'))).toBe(true);
    } finally {
      write.mockRestore();
      exit.mockRestore();
    }
  });

  it('throws from parseConfig instead of exiting', () => {
    expect(() => parseConfig(schema, {})).toThrow(z.ZodError);
  });

  it('refuses a published example secret in production, naming the setting, and only there', () => {
    const env = { KAFKA_BROKERS: 'a:9092', INTERNAL_SECRET: EXAMPLE_SECRETS[0] };
    expect(() => parseConfig(schema, { ...env, NODE_ENV: 'production' })).toThrow(
      /^INTERNAL_SECRET: is a published example value/,
    );
    expect(parseConfig(schema, { ...env, NODE_ENV: 'development' }).INTERNAL_SECRET).toBe(
      EXAMPLE_SECRETS[0],
    );
    expect(
      parseConfig(schema, { ...env, NODE_ENV: 'production', INTERNAL_SECRET: 'y'.repeat(40) })
        .NODE_ENV,
    ).toBe('production');
  });
});
