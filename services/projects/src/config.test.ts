import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const required = {
  INTERNAL_SECRET: 'a-secret-that-is-at-least-32-characters-long',
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
};

describe('the projects config', () => {
  it.each([
    [
      'defaults the port, database, consumer group and its start, and splits the brokers',
      {},
      {
        PORT: 4002,
        MONGO_DB: 'platform_projects',
        KAFKA_GROUP_ID: 'projects',
        KAFKA_FROM_BEGINNING: true,
        KAFKA_BROKERS: ['127.0.0.1:9092', '127.0.0.1:9093'],
        LOG_LEVEL: 'info',
      },
    ],
    [
      'takes the values it is given',
      { PORT: '5002', MONGO_DB: 'other', KAFKA_GROUP_ID: 'blue', KAFKA_FROM_BEGINNING: 'false' },
      { PORT: 5002, MONGO_DB: 'other', KAFKA_GROUP_ID: 'blue', KAFKA_FROM_BEGINNING: false },
    ],
  ])('%s', (_case, env, expected) => {
    expect(parseConfig(configSchema, { ...required, ...env })).toMatchObject(expected);
  });

  it.each([
    ['the internal secret is short', { INTERNAL_SECRET: 'short' }],
    ['the Mongo URL is not one', { MONGO_URL: 'http://127.0.0.1' }],
    ['no broker is given', { KAFKA_BROKERS: ' , ' }],
    ['the port is not a number', { PORT: 'eighty' }],
    ['the consumer start is not a boolean', { KAFKA_FROM_BEGINNING: 'sometimes' }],
  ])('refuses to start when %s', (_case, override) => {
    expect(() => parseConfig(configSchema, { ...required, ...override })).toThrow();
  });
});
