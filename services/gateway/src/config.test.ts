import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

const parse = (env: Record<string, string | undefined> = {}) =>
  parseConfig(configSchema, {
    INTERNAL_SECRET: 'i'.repeat(32),
    SESSION_SECRET: 's'.repeat(32),
    REDIS_URL: 'redis://127.0.0.1:6379',
    AUTH_URL: 'http://auth:4001',
    PROJECTS_URL: 'http://projects:4002',
    DEPLOYMENTS_URL: 'http://deployments:4003',
    WEBHOOKS_URL: 'http://webhooks:4004',
    ...env,
  });

describe('gateway config', () => {
  it('has the documented defaults', () => {
    expect(parse()).toMatchObject({
      PORT: 8080,
      REDIS_PREFIX: 'gateway:',
      SESSION_ABSOLUTE_TTL: 30 * DAY_MS,
      SESSION_RENEW_AFTER: 10 * MINUTE_MS,
      COOKIE_SECURE: false,
      PUBLIC_URL: 'http://localhost:8080',
      ALLOWED_ORIGINS: ['http://localhost:8080'],
      RATE_LIMIT_PER_MINUTE: 600,
      IP_RATE_LIMIT_PER_MINUTE: 1200,
      ACCOUNT_RATE_LIMIT_PER_MINUTE: 600,
      LOGIN_RATE_LIMIT_PER_MINUTE: 20,
      DEPLOY_RATE_LIMIT: 30,
      DEPLOY_RATE_WINDOW: MINUTE_MS,
      WEBHOOK_TEST_RATE_LIMIT: 10,
      WEBHOOK_TEST_RATE_WINDOW: MINUTE_MS,
      REDELIVER_RATE_LIMIT: 30,
      REDELIVER_RATE_WINDOW: MINUTE_MS,
      UPSTREAM_TIMEOUT_MS: 30_000,
      UPSTREAM_CONCURRENCY: 128,
      UPSTREAM_QUEUE_LIMIT: 4096,
      APPS_HOST_SUFFIX: '.localhost',
      RUNTIME_ROUTER_URL: 'http://127.0.0.1:4020',
      APPS_IDLE_TIMEOUT: 5 * MINUTE_MS,
    });
  });

  it.each([
    [
      'the session renewal interval as a duration, in ms',
      { SESSION_RENEW_AFTER: '1m' },
      { SESSION_RENEW_AFTER: MINUTE_MS },
    ],
    [
      'the absolute session lifetime as a duration, in ms',
      { SESSION_ABSOLUTE_TTL: '12h' },
      { SESSION_ABSOLUTE_TTL: 12 * 60 * MINUTE_MS },
    ],
    ['PORT when GATEWAY_PORT is unset', { PORT: '9000' }, { PORT: 9000 }],
    ['GATEWAY_PORT over PORT', { PORT: '9000', GATEWAY_PORT: '9001' }, { PORT: 9001 }],
    [
      'a per-IP limit raised with the per-session one',
      { RATE_LIMIT_PER_MINUTE: '5000' },
      { IP_RATE_LIMIT_PER_MINUTE: 10_000 },
    ],
    [
      'a per-IP limit that is set',
      { RATE_LIMIT_PER_MINUTE: '5000', IP_RATE_LIMIT_PER_MINUTE: '7' },
      { IP_RATE_LIMIT_PER_MINUTE: 7 },
    ],
    [
      'a per-account limit raised with the per-session one',
      { RATE_LIMIT_PER_MINUTE: '5000' },
      { ACCOUNT_RATE_LIMIT_PER_MINUTE: 5000 },
    ],
    [
      'a per-account limit that is set',
      { RATE_LIMIT_PER_MINUTE: '5000', ACCOUNT_RATE_LIMIT_PER_MINUTE: '900' },
      { RATE_LIMIT_PER_MINUTE: 5000, ACCOUNT_RATE_LIMIT_PER_MINUTE: 900 },
    ],
    [
      'the operation limits and their windows as durations, in ms',
      {
        DEPLOY_RATE_LIMIT: '5',
        DEPLOY_RATE_WINDOW: '1h',
        WEBHOOK_TEST_RATE_LIMIT: '2',
        WEBHOOK_TEST_RATE_WINDOW: '30s',
        REDELIVER_RATE_LIMIT: '7',
        REDELIVER_RATE_WINDOW: '5m',
      },
      {
        DEPLOY_RATE_LIMIT: 5,
        DEPLOY_RATE_WINDOW: 60 * MINUTE_MS,
        WEBHOOK_TEST_RATE_LIMIT: 2,
        WEBHOOK_TEST_RATE_WINDOW: 30_000,
        REDELIVER_RATE_LIMIT: 7,
        REDELIVER_RATE_WINDOW: 5 * MINUTE_MS,
      },
    ],
    [
      'the public origin as the allowed one',
      { PUBLIC_URL: 'https://platform.example.com/app/' },
      { ALLOWED_ORIGINS: ['https://platform.example.com'] },
    ],
    [
      'listed origins, normalised',
      { ALLOWED_ORIGINS: 'https://a.example/, http://b.example:8080' },
      { ALLOWED_ORIGINS: ['https://a.example', 'http://b.example:8080'] },
    ],
    ['production as Secure cookies', { NODE_ENV: 'production' }, { COOKIE_SECURE: true }],
    [
      'the apps host suffix, lower-cased',
      { APPS_HOST_SUFFIX: '.Apps.Example.com' },
      { APPS_HOST_SUFFIX: '.apps.example.com' },
    ],
    [
      'the runtime router URL',
      { RUNTIME_ROUTER_URL: 'http://deployments:4020' },
      { RUNTIME_ROUTER_URL: 'http://deployments:4020' },
    ],
    ['the apps idle timeout', { APPS_IDLE_TIMEOUT: '30s' }, { APPS_IDLE_TIMEOUT: 30_000 }],
  ])('reads %s', (_case, env, expected) => {
    expect(parse(env)).toMatchObject(expected);
  });

  it.each([
    ['a short SESSION_SECRET', { SESSION_SECRET: 'short' }, /SESSION_SECRET/],
    [
      'the development identity provider in production',
      { NODE_ENV: 'production', DEV_IDP_URL: 'http://dev-idp:4010' },
      /must not be set in production/,
    ],
    ['a missing service URL', { WEBHOOKS_URL: undefined }, /WEBHOOKS_URL/],
    ['a bad duration', { SESSION_ABSOLUTE_TTL: 'a month' }, /SESSION_ABSOLUTE_TTL/],
    ['a lifetime without a unit', { SESSION_ABSOLUTE_TTL: '3600' }, /SESSION_ABSOLUTE_TTL/],
    ['a zero rate limit', { RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE/],
    ['a zero per-account limit', { ACCOUNT_RATE_LIMIT_PER_MINUTE: '0' }, /ACCOUNT_RATE_LIMIT/],
    ['a zero trigger limit', { DEPLOY_RATE_LIMIT: '0' }, /DEPLOY_RATE_LIMIT/],
    ['a window without a unit', { DEPLOY_RATE_WINDOW: '60' }, /DEPLOY_RATE_WINDOW/],
    ['a window under a second', { WEBHOOK_TEST_RATE_WINDOW: '500ms' }, /WEBHOOK_TEST_RATE_WINDOW/],
    ['a window over a day', { REDELIVER_RATE_WINDOW: '2d' }, /REDELIVER_RATE_WINDOW/],
    ['a bad renewal interval', { SESSION_RENEW_AFTER: 'often' }, /SESSION_RENEW_AFTER/],
    ['a negative renewal interval', { SESSION_RENEW_AFTER: '-1m' }, /SESSION_RENEW_AFTER/],
    ['a renewal interval over a day', { SESSION_RENEW_AFTER: '2d' }, /SESSION_RENEW_AFTER/],
    ['an apps host suffix without its dot', { APPS_HOST_SUFFIX: 'localhost' }, /APPS_HOST_SUFFIX/],
    ['a router URL that is not http://', { RUNTIME_ROUTER_URL: 'https://x' }, /RUNTIME_ROUTER_URL/],
    ['an apps idle timeout without a unit', { APPS_IDLE_TIMEOUT: '30' }, /APPS_IDLE_TIMEOUT/],
  ])('refuses %s', (_case, env, message) => {
    expect(() => parse(env)).toThrow(message);
  });
});
