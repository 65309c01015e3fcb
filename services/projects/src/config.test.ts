import { tmpdir } from 'node:os';
import { realpathSync } from 'node:fs';
import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const required = {
  INTERNAL_SECRET: 'a-secret-that-is-at-least-32-characters-long',
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
  ENCRYPTION_KEY: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
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
        ENCRYPTION_PREVIOUS_KEYS: [],
        SOURCE_ALLOW_LOCAL: { allow: 'none' },
        APPS_URL_TEMPLATE: 'http://{serviceId}.localhost:8080',
      },
    ],
    [
      'takes the values it is given',
      { PORT: '5002', MONGO_DB: 'other', KAFKA_GROUP_ID: 'blue', KAFKA_FROM_BEGINNING: 'false' },
      { PORT: 5002, MONGO_DB: 'other', KAFKA_GROUP_ID: 'blue', KAFKA_FROM_BEGINNING: false },
    ],
    [
      'takes SOURCE_ALLOW_LOCAL=true',
      { SOURCE_ALLOW_LOCAL: 'true' },
      { SOURCE_ALLOW_LOCAL: { allow: 'anywhere' } },
    ],
    [
      'takes SOURCE_ALLOW_LOCAL as a directory, by its real path',
      { SOURCE_ALLOW_LOCAL: tmpdir() },
      { SOURCE_ALLOW_LOCAL: { allow: 'under', directory: realpathSync(tmpdir()) } },
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
    ['the encryption key is missing', { ENCRYPTION_KEY: undefined }],
    ['the encryption key is not 32 bytes', { ENCRYPTION_KEY: 'k1:c2hvcnQ=' }],
    ['the apps URL template has no {serviceId}', { APPS_URL_TEMPLATE: 'http://apps.localhost' }],
    ['the apps URL template is not http(s)', { APPS_URL_TEMPLATE: 'ftp://{serviceId}.example' }],
    [
      'local sources are allowed in production',
      { NODE_ENV: 'production', SOURCE_ALLOW_LOCAL: 'true' },
    ],
    [
      'a local sources directory is given in production',
      { NODE_ENV: 'production', SOURCE_ALLOW_LOCAL: tmpdir() },
    ],
    ['the local sources directory is relative', { SOURCE_ALLOW_LOCAL: 'repos' }],
    ['the local sources directory does not exist', { SOURCE_ALLOW_LOCAL: '/nonexistent/repos' }],
    ['SOURCE_ALLOW_LOCAL is neither', { SOURCE_ALLOW_LOCAL: 'yes' }],
  ])('refuses to start when %s', (_case, override) => {
    expect(() => parseConfig(configSchema, { ...required, ...override })).toThrow();
  });
});
