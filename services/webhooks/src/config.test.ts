import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const KEY = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const OLD_KEY = `k0:${Buffer.alloc(32, 2).toString('base64')}`;

const parse = (env: Record<string, string | undefined> = {}) =>
  parseConfig(configSchema, {
    INTERNAL_SECRET: 'x'.repeat(32),
    MONGO_URL: 'mongodb://127.0.0.1:27017',
    KAFKA_BROKERS: '127.0.0.1:9092',
    ENCRYPTION_KEY: KEY,
    ...env,
  });

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('webhooks config', () => {
  it('has the documented defaults', () => {
    expect(parse()).toMatchObject({
      PORT: 4004,
      MONGO_DB: 'platform_webhooks',
      KAFKA_GROUP_ID: 'webhooks',
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      WEBHOOK_ALLOW_PRIVATE: false,
      WEBHOOK_RETRY_SCHEDULE: [
        5 * SECOND,
        5 * MINUTE,
        30 * MINUTE,
        2 * HOUR,
        5 * HOUR,
        10 * HOUR,
        10 * HOUR,
      ],
      WEBHOOK_TIMEOUT_MS: 15_000,
      WEBHOOK_DISABLE_AFTER: 5 * DAY,
      WEBHOOK_DELIVERY_RETENTION: 14 * DAY,
      DELIVERY_CONCURRENCY: 16,
      DELIVERY_WORKER: true,
      DELIVERY_POLL_INTERVAL: 250,
      DELIVERY_IN_ORDER_WINDOW: SECOND,
      DELIVERY_STOP_GRACE: 5 * SECOND,
      DELIVERY_HOUSEKEEPING_INTERVAL: HOUR,
      ENCRYPTION_KEY: KEY,
      ENCRYPTION_PREVIOUS_KEYS: [],
      WEBHOOK_SECRET_OVERLAP: DAY,
    });
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', '1s,1s,2s', [SECOND, SECOND, 2 * SECOND]],
    ['WEBHOOK_RETRY_SCHEDULE', '200ms, 200ms ,400ms', [200, 200, 400]],
    [
      'WEBHOOK_RETRY_SCHEDULE',
      '250ms,5s,30m,2h,5d',
      [250, 5 * SECOND, 30 * MINUTE, 2 * HOUR, 5 * DAY],
    ],
    ['WEBHOOK_DISABLE_AFTER', '36h', 36 * HOUR],
    ['WEBHOOK_DELIVERY_RETENTION', ' 7d ', 7 * DAY],
    ['WEBHOOK_ALLOW_PRIVATE', 'true', true],
    ['DELIVERY_CONCURRENCY', '4', 4],
    ['DELIVERY_WORKER', 'false', false],
    ['DELIVERY_POLL_INTERVAL', '100ms', 100],
    ['WEBHOOK_SECRET_OVERLAP', '2h', 2 * HOUR],
    ['ENCRYPTION_PREVIOUS_KEYS', ` ${OLD_KEY} `, [OLD_KEY]],
  ])('reads %s=%j', (name, value, expected) => {
    expect(parse({ [name]: value })[name as keyof ReturnType<typeof parse>]).toEqual(expected);
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', '5s,later'],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,soon,0s'],
    ['WEBHOOK_RETRY_SCHEDULE', ''],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m'],
    ['WEBHOOK_RETRY_SCHEDULE', '5'],
    ['WEBHOOK_RETRY_SCHEDULE', '-1s'],
    ['WEBHOOK_DISABLE_AFTER', '5x'],
    ['WEBHOOK_DISABLE_AFTER', 's'],
    ['WEBHOOK_DELIVERY_RETENTION', '0s'],
    ['DELIVERY_POLL_INTERVAL', '1ms'],
    ['WEBHOOK_SECRET_OVERLAP', '31d'],
    ['WEBHOOK_SECRET_OVERLAP', 'a day'],
    ['ENCRYPTION_KEY', undefined],
    ['ENCRYPTION_KEY', 'k1:c2hvcnQ='],
    ['ENCRYPTION_PREVIOUS_KEYS', 'nokey'],
  ])('refuses %s=%j, naming the variable', (name, value) => {
    expect(() => parse({ [name]: value })).toThrow(name);
  });

  it.each(['local-dev', 'dev-only'])(
    'refuses the published example ENCRYPTION_KEY (%s) with NODE_ENV=production',
    (keyId) => {
      const example = `${keyId}:ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGU=`;

      expect(parse({ ENCRYPTION_KEY: example }).ENCRYPTION_KEY).toBe(example);
      expect(() => parse({ ENCRYPTION_KEY: example, NODE_ENV: 'production' })).toThrow(
        'ENCRYPTION_KEY: is a published example value',
      );
    },
  );
});
