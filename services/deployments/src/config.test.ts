import { homedir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '@platform/shared';
import { testEnv } from '@platform/shared/testing';
import { configSchema } from './config';

const PROJECTS_URL = 'http://projects:4002';
const ENCRYPTION_KEY = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
// The test environment (the service's requirements met), with the port left to its default.
const parse = (env: Record<string, string | undefined> = {}) =>
  parseConfig(configSchema, {
    ...testEnv(),
    PORT: undefined,
    PROJECTS_URL,
    ENCRYPTION_KEY,
    ...env,
  });

describe('deployments config', () => {
  it('fills in the defaults of the service and its pipeline', () => {
    const config = parse({ KAFKA_BROKERS: '127.0.0.1:9092' });

    expect(config).toMatchObject({
      PORT: 4003,
      MONGO_DB: 'platform_deployments',
      KAFKA_GROUP_ID: 'deployments',
      KAFKA_FROM_BEGINNING: true,
      KAFKA_BROKERS: ['127.0.0.1:9092'],
      STEP_TIMEOUT: 600_000,
      STEP_KILL_GRACE: 5_000,
      LOG_LIMIT_BYTES: 262144,
      PIPELINE_CONCURRENCY: 2,
      PIPELINE_ENABLED: true,
      PIPELINE_LEASE: 30_000,
      PIPELINE_HEARTBEAT: 300,
      PIPELINE_POLL_INTERVAL: 1_000,
      LOG_FLUSH_DELAY: 5,
      LOG_FOLLOW_POLL: 1_000,
      SANDBOX: 'bubblewrap',
      ALLOW_UNSANDBOXED: false,
      SANDBOX_BWRAP: 'bwrap',
      SANDBOX_UID_BASE: 2_000_000_000,
      BUILD_CPU_SECONDS: 600,
      BUILD_MEMORY_BYTES: 2 * 1024 ** 3,
      BUILD_CPUS: 1,
      BUILD_DISK_BYTES: 4 * 1024 ** 3,
      BUILD_PROCESSES: 512,
      RUNTIME_LOG_POLL_INTERVAL: 250,
      ENCRYPTION_PREVIOUS_KEYS: [],
      RUNTIME_DIR: path.join(homedir(), '.cache/platform-dev/runtime'),
      RUNTIME_ROUTER_PORT: 4020,
      HEALTH_CHECK_TIMEOUT: 60_000,
      SOURCE_ALLOW_LOCAL: { allow: 'none' },
      SOURCE_FETCH_TIMEOUT: 120_000,
      BUILDS_DIR: path.join(homedir(), '.cache/platform-dev/builds'),
    });
  });

  it.each([
    ['BUILD_CPU_SECONDS', '60', 60],
    ['BUILD_PROCESSES', '64', 64],
    ['RUNTIME_LOG_POLL_INTERVAL', '1s', 1_000],
    ['RUNTIME_RESTART_BACKOFF', '250ms', 250],
    ['STEP_TIMEOUT', '90s', 90_000],
    ['STEP_KILL_GRACE', '1.5s', 1_500],
    ['LOG_LIMIT_BYTES', '65536', 65536],
    ['PIPELINE_CONCURRENCY', '4', 4],
    ['PIPELINE_ENABLED', 'false', false],
    ['PIPELINE_LEASE', '2s', 2_000],
    ['PIPELINE_HEARTBEAT', '100ms', 100],
    ['PIPELINE_POLL_INTERVAL', '200ms', 200],
    ['LOG_FLUSH_DELAY', '1ms', 1],
    ['LOG_FOLLOW_POLL', '10m', 600_000],
    ['SANDBOX_BWRAP', '/opt/bin/bwrap', '/opt/bin/bwrap'],
    ['SANDBOX_UID_BASE', '200000', 200_000],
    ['RUNTIME_DIR', '/data/runtime', '/data/runtime'],
    ['RUNTIME_ROUTER_PORT', '5020', 5020],
    ['HEALTH_CHECK_TIMEOUT', '90s', 90_000],
    ['SOURCE_ALLOW_LOCAL', 'true', { allow: 'anywhere' }],
    ['SOURCE_FETCH_TIMEOUT', '30s', 30_000],
    ['BUILDS_DIR', '/data/builds', '/data/builds'],
  ])('reads %s=%j', (name, value, expected) => {
    expect(parse({ [name]: value })).toMatchObject({ [name]: expected });
  });

  it.each([
    ['PROJECTS_URL', { PROJECTS_URL: undefined }],
    ['PROJECTS_URL', { PROJECTS_URL: 'not a url' }],
    ['ENCRYPTION_KEY', { ENCRYPTION_KEY: undefined }],
    ['ENCRYPTION_KEY', { ENCRYPTION_KEY: 'k1:c2hvcnQ=' }],
    ['BUILD_MEMORY_BYTES', { BUILD_MEMORY_BYTES: '1000' }],
    ['BUILD_PROCESSES', { BUILD_PROCESSES: '2' }],
    ['STEP_TIMEOUT', { STEP_TIMEOUT: '600' }],
    ['STEP_TIMEOUT', { STEP_TIMEOUT: '10ms' }],
    ['STEP_KILL_GRACE', { STEP_KILL_GRACE: '5' }],
    ['LOG_LIMIT_BYTES', { LOG_LIMIT_BYTES: '100' }],
    ['PIPELINE_CONCURRENCY', { PIPELINE_CONCURRENCY: 'two' }],
    ['PIPELINE_ENABLED', { PIPELINE_ENABLED: 'yes' }],
    ['PIPELINE_HEARTBEAT', { PIPELINE_HEARTBEAT: '1ms' }],
    ['PIPELINE_HEARTBEAT', { PIPELINE_HEARTBEAT: '3s', PIPELINE_LEASE: '2s' }],
    ['PIPELINE_POLL_INTERVAL', { PIPELINE_POLL_INTERVAL: 'soon' }],
    ['SANDBOX', { SANDBOX: 'docker' }],
    ['SANDBOX_UID_BASE', { SANDBOX_UID_BASE: '0' }],
    ['SANDBOX_UID_BASE', { SANDBOX_UID_BASE: String(2 ** 31) }],
    ['ALLOW_UNSANDBOXED', { ALLOW_UNSANDBOXED: 'maybe' }],
    ['HEALTH_CHECK_TIMEOUT', { HEALTH_CHECK_TIMEOUT: '60' }],
    ['RUNTIME_ROUTER_PORT', { RUNTIME_ROUTER_PORT: '70000' }],
    ['SOURCE_ALLOW_LOCAL', { SOURCE_ALLOW_LOCAL: 'yes' }],
    ['SOURCE_ALLOW_LOCAL', { SOURCE_ALLOW_LOCAL: 'repos' }],
    ['SOURCE_ALLOW_LOCAL', { SOURCE_ALLOW_LOCAL: '/nonexistent/repos' }],
    ['SOURCE_FETCH_TIMEOUT', { SOURCE_FETCH_TIMEOUT: '120' }],
    ['SOURCE_FETCH_TIMEOUT', { SOURCE_FETCH_TIMEOUT: '10ms' }],
    ['BUILDS_DIR', { BUILDS_DIR: 'builds' }],
    ['BUILDS_DIR', { BUILDS_DIR: '' }],
  ])('refuses a missing or bad %s', (name, env) => {
    expect(() => parse(env)).toThrow(name);
  });

  it('runs code without a sandbox only when ALLOW_UNSANDBOXED=true, and never in production', () => {
    expect(() => parse({ SANDBOX: 'none' })).toThrow('ALLOW_UNSANDBOXED=true');
    expect(parse({ SANDBOX: 'none', ALLOW_UNSANDBOXED: 'true' })).toMatchObject({
      SANDBOX: 'none',
      ALLOW_UNSANDBOXED: true,
    });
    expect(() =>
      parse({ SANDBOX: 'none', ALLOW_UNSANDBOXED: 'true', NODE_ENV: 'production' }),
    ).toThrow('NODE_ENV=production');
  });
});
