import { parseConfig } from '@platform/shared';
import { gatewayEnv, parseDurationSeconds } from './config';

const required = {
  INTERNAL_SECRET: 'i'.repeat(32),
  SESSION_SECRET: 's'.repeat(32),
  REDIS_URL: 'redis://127.0.0.1:6379',
  AUTH_URL: 'http://auth:4001',
  PROJECTS_URL: 'http://projects:4002',
  DEPLOYMENTS_URL: 'http://deployments:4003',
  WEBHOOKS_URL: 'http://webhooks:4004',
};

describe('gateway config', () => {
  it('has the documented defaults', () => {
    const config = parseConfig(gatewayEnv, required);

    expect(config).toMatchObject({
      PORT: 8080,
      REDIS_PREFIX: 'gateway:',
      SESSION_ABSOLUTE_TTL: 30 * 86_400,
      SESSION_RENEW_AFTER: 600,
      COOKIE_SECURE: false,
      PUBLIC_URL: 'http://localhost:8080',
      ALLOWED_ORIGINS: ['http://localhost:8080'],
      RATE_LIMIT_PER_MINUTE: 600,
      IP_RATE_LIMIT_PER_MINUTE: 1200,
      LOGIN_RATE_LIMIT_PER_MINUTE: 20,
      UPSTREAM_TIMEOUT_MS: 30_000,
      UPSTREAM_CONCURRENCY: 128,
    });
    expect(config.DEV_IDP_URL).toBeUndefined();
  });

  it('reads the session renewal interval as a duration', () => {
    expect(
      parseConfig(gatewayEnv, { ...required, SESSION_RENEW_AFTER: '1m' }).SESSION_RENEW_AFTER,
    ).toBe(60);
  });

  it('takes GATEWAY_PORT over PORT', () => {
    expect(parseConfig(gatewayEnv, { ...required, PORT: '9000' }).PORT).toBe(9000);
    expect(parseConfig(gatewayEnv, { ...required, PORT: '9000', GATEWAY_PORT: '9001' }).PORT).toBe(
      9001,
    );
  });

  it('raises the per-IP limit with the per-session one unless it is set', () => {
    expect(
      parseConfig(gatewayEnv, { ...required, RATE_LIMIT_PER_MINUTE: '5000' })
        .IP_RATE_LIMIT_PER_MINUTE,
    ).toBe(10_000);
    expect(
      parseConfig(gatewayEnv, {
        ...required,
        RATE_LIMIT_PER_MINUTE: '5000',
        IP_RATE_LIMIT_PER_MINUTE: '7',
      }).IP_RATE_LIMIT_PER_MINUTE,
    ).toBe(7);
  });

  it('allows the public origin by default and normalises listed origins', () => {
    const own = parseConfig(gatewayEnv, {
      ...required,
      PUBLIC_URL: 'https://platform.example.com/app/',
    });
    const listed = parseConfig(gatewayEnv, {
      ...required,
      ALLOWED_ORIGINS: 'https://a.example/, http://b.example:8080',
    });

    expect(own.ALLOWED_ORIGINS).toEqual(['https://platform.example.com']);
    expect(listed.ALLOWED_ORIGINS).toEqual(['https://a.example', 'http://b.example:8080']);
  });

  it('makes cookies Secure and drops dev-idp in production', () => {
    const config = parseConfig(gatewayEnv, {
      ...required,
      NODE_ENV: 'production',
      DEV_IDP_URL: 'http://dev-idp:4010',
    });

    expect(config.COOKIE_SECURE).toBe(true);
    expect(config.DEV_IDP_URL).toBeUndefined();
  });

  it.each([
    ['a short SESSION_SECRET', { SESSION_SECRET: 'short' }, /SESSION_SECRET/],
    ['a missing service URL', { WEBHOOKS_URL: undefined }, /WEBHOOKS_URL/],
    ['a bad duration', { SESSION_ABSOLUTE_TTL: 'a month' }, /SESSION_ABSOLUTE_TTL/],
    ['a zero rate limit', { RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
    ['a bad renewal interval', { SESSION_RENEW_AFTER: 'often' }, /SESSION_RENEW_AFTER/],
    ['a renewal interval over a day', { SESSION_RENEW_AFTER: '2d' }, /SESSION_RENEW_AFTER/],
  ])('refuses %s', (_case, env, message) => {
    expect(() => parseConfig(gatewayEnv, { ...required, ...env })).toThrow(message);
  });
});

describe('parseDurationSeconds', () => {
  it.each([
    ['30d', 2_592_000],
    ['12h', 43_200],
    ['90m', 5_400],
    ['45s', 45],
    ['3600', 3_600],
  ])('reads %s as %d seconds', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
  });

  it.each(['', 'd', '1w', '-1d', '1.5h'])('refuses %j', (text) => {
    expect(parseDurationSeconds(text)).toBeNull();
  });
});
