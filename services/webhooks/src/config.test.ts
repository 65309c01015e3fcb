import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const required = {
  INTERNAL_SECRET: 'x'.repeat(32),
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  KAFKA_BROKERS: '127.0.0.1:9092',
};

describe('webhooks config', () => {
  it('has the documented defaults', () => {
    const config = parseConfig(configSchema, required);

    expect(config).toMatchObject({
      PORT: 4004,
      MONGO_DB: 'platform_webhooks',
      KAFKA_GROUP_ID: 'webhooks',
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      WEBHOOK_ALLOW_PRIVATE: false,
      WEBHOOK_RETRY_SCHEDULE: [
        5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
      ],
      WEBHOOK_TIMEOUT_MS: 15_000,
      WEBHOOK_DISABLE_AFTER: 5 * 86_400_000,
      WEBHOOK_DELIVERY_RETENTION: 14 * 86_400_000,
      DELIVERY_CONCURRENCY: 16,
    });
  });

  it('reads a custom retry schedule, private delivery and concurrency', () => {
    const config = parseConfig(configSchema, {
      ...required,
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      DELIVERY_CONCURRENCY: '4',
    });

    expect(config.WEBHOOK_RETRY_SCHEDULE).toEqual([1_000, 1_000, 2_000]);
    expect(config.WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(config.DELIVERY_CONCURRENCY).toBe(4);
  });

  it('refuses a retry schedule that is not a list of durations', () => {
    expect(() =>
      parseConfig(configSchema, { ...required, WEBHOOK_RETRY_SCHEDULE: '5s,later' }),
    ).toThrow(/later/);
  });
});
