import path from 'node:path';
import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const required = {
  INTERNAL_SECRET: 'a-secret-of-at-least-thirty-two-characters',
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  KAFKA_BROKERS: '127.0.0.1:9092',
  PROJECTS_URL: 'http://projects:4002',
};

describe('deployments config', () => {
  it('fills in the defaults of the service and its pipeline', () => {
    const config = parseConfig(configSchema, required);

    expect(config).toMatchObject({
      PORT: 4003,
      MONGO_DB: 'platform_deployments',
      KAFKA_GROUP_ID: 'deployments',
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      STEP_TIMEOUT_SECONDS: 600,
      LOG_LIMIT_BYTES: 262144,
      PIPELINE_CONCURRENCY: 2,
      PIPELINE_ENABLED: true,
      PIPELINE_LEASE_SECONDS: 30,
    });
    const scripts = path.resolve(__dirname, '../pipeline');
    expect(config.BUILD_COMMAND).toBe(`bash '${scripts}/build.sh'`);
    expect(config.DEPLOY_COMMAND).toBe(`bash '${scripts}/deploy.sh'`);
  });

  it('takes the commands and limits from the environment', () => {
    const config = parseConfig(configSchema, {
      ...required,
      BUILD_COMMAND: 'make build',
      DEPLOY_COMMAND: './deploy --prod',
      STEP_TIMEOUT_SECONDS: '90',
      LOG_LIMIT_BYTES: '65536',
      PIPELINE_CONCURRENCY: '4',
      PIPELINE_ENABLED: 'false',
    });

    expect(config).toMatchObject({
      BUILD_COMMAND: 'make build',
      DEPLOY_COMMAND: './deploy --prod',
      STEP_TIMEOUT_SECONDS: 90,
      LOG_LIMIT_BYTES: 65536,
      PIPELINE_CONCURRENCY: 4,
      PIPELINE_ENABLED: false,
    });
  });

  it.each([
    ['PROJECTS_URL', { PROJECTS_URL: undefined }],
    ['PROJECTS_URL', { PROJECTS_URL: 'not a url' }],
    ['STEP_TIMEOUT_SECONDS', { STEP_TIMEOUT_SECONDS: '0' }],
    ['LOG_LIMIT_BYTES', { LOG_LIMIT_BYTES: '100' }],
    ['PIPELINE_CONCURRENCY', { PIPELINE_CONCURRENCY: 'two' }],
    ['PIPELINE_ENABLED', { PIPELINE_ENABLED: 'yes' }],
  ])('refuses a missing or bad %s', (name, env) => {
    expect(() => parseConfig(configSchema, { ...required, ...env })).toThrow(name);
  });
});
