import { homedir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '@platform/shared';
import { hostResolver } from '../../sandbox/network/dns-forwarder';
import { DEFAULT_EGRESS_DENY } from '../../sandbox/network/egress-rules';
import { supervisorConfigSchema, supervisorEnvOf } from './supervisor.config';

const parse = (env: Record<string, string | undefined> = {}) =>
  parseConfig(supervisorConfigSchema, env);

describe('runtime supervisor config', () => {
  it('has the documented defaults, and listens with the router', () => {
    expect(parse()).toEqual({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      SANDBOX: 'bubblewrap',
      ALLOW_UNSANDBOXED: false,
      SANDBOX_BWRAP: 'bwrap',
      SANDBOX_UID_BASE: 2_000_000_000,
      SANDBOX_NETWORK_CIDR: '10.213.0.0/16',
      SANDBOX_EGRESS_DENY: DEFAULT_EGRESS_DENY,
      SANDBOX_EGRESS_ALLOW: [],
      SANDBOX_DNS: hostResolver(),
      RUNTIME_APP_MEMORY_BYTES: 512 * 1024 ** 2,
      RUNTIME_APP_CPUS: 1,
      RUNTIME_APP_PROCESSES: 512,
      RUNTIME_APP_TMP_BYTES: 64 * 1024 ** 2,
      LOG_LINE_MAX_BYTES: 16 * 1024,
      RUNTIME_LOG_MAX_BYTES: 64 * 1024 ** 2,
      RUNTIME_DIR: path.join(homedir(), '.cache/platform-dev/runtime'),
      RUNTIME_ROUTER_PORT: 4020,
      PORT: 4020,
      RUNTIME_ROUTER_HOST: '127.0.0.1',
      HOST: '127.0.0.1',
      RUNTIME_RESTART_BACKOFF: 1_000,
      RUNTIME_RESTART_BACKOFF_MAX: 30_000,
      RUNTIME_RESTART_LIMIT: 5,
      RUNTIME_RESTART_WINDOW: 600_000,
      RUNTIME_STOP_GRACE: 5_000,
      RUNTIME_DRAIN_TIMEOUT: 10_000,
      RUNTIME_CONTROL_TIMEOUT: 10_000,
      RUNTIME_RELEASE_RETENTION: 600_000,
    });
  });

  it.each([
    ['RUNTIME_ROUTER_PORT', '5020', { RUNTIME_ROUTER_PORT: 5020, PORT: 5020 }],
    ['RUNTIME_DIR', '/data/runtime', { RUNTIME_DIR: '/data/runtime' }],
    ['RUNTIME_RESTART_BACKOFF', '250ms', { RUNTIME_RESTART_BACKOFF: 250 }],
    ['RUNTIME_RESTART_LIMIT', '0', { RUNTIME_RESTART_LIMIT: 0 }],
    ['RUNTIME_RESTART_WINDOW', '1h', { RUNTIME_RESTART_WINDOW: 3_600_000 }],
    ['RUNTIME_APP_PROCESSES', '64', { RUNTIME_APP_PROCESSES: 64 }],
    ['ALLOW_UNSANDBOXED', 'true', { ALLOW_UNSANDBOXED: true }],
  ])('reads %s=%j', (name, value, expected) => {
    expect(parse({ [name]: value })).toMatchObject(expected);
  });

  it.each([
    ['RUNTIME_ROUTER_PORT', '70000'],
    ['RUNTIME_RESTART_BACKOFF', '1000'],
    ['RUNTIME_RESTART_LIMIT', '-1'],
    ['RUNTIME_APP_MEMORY_BYTES', '1024'],
    ['SANDBOX', 'docker'],
    ['SANDBOX_UID_BASE', '0'],
  ])('refuses %s=%j', (name, value) => {
    expect(() => parse({ [name]: value })).toThrow(name);
  });

  it('writes a config back as the environment that reads as the same config', () => {
    const config = parse({
      RUNTIME_RESTART_BACKOFF: '250ms',
      RUNTIME_STOP_GRACE: '2s',
      RUNTIME_APP_PROCESSES: '64',
      SANDBOX: 'none',
      ALLOW_UNSANDBOXED: 'true',
      LOG_LEVEL: 'warn',
    });
    const { PORT: _port, ...settings } = config;

    expect(parse(supervisorEnvOf(settings))).toEqual(config);
  });
});
