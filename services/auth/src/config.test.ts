import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

const parse = (env: Record<string, string | undefined> = {}) =>
  parseConfig(configSchema, {
    INTERNAL_SECRET: 'x'.repeat(32),
    MONGO_URL: 'mongodb://127.0.0.1:27017',
    GOOGLE_CLIENT_ID: 'client.apps.googleusercontent.com',
    ...env,
  });

describe('auth config', () => {
  it("takes Google's own certificates URL in production", () => {
    const certs = 'https://www.googleapis.com/oauth2/v1/certs';
    expect(parse({ NODE_ENV: 'production', GOOGLE_CERTS_URL: certs }).GOOGLE_CERTS_URL).toBe(certs);
  });

  it('defaults to port 4001, the platform_auth database and Google’s own certificates', () => {
    const config = parse();

    expect(config).toMatchObject({ PORT: 4001, MONGO_DB: 'platform_auth' });
    expect(config.GOOGLE_CERTS_URL).toBeUndefined();
  });

  it.each([
    ['without GOOGLE_CLIENT_ID', { GOOGLE_CLIENT_ID: undefined }, /GOOGLE_CLIENT_ID/],
    ['without MONGO_URL', { MONGO_URL: undefined }, /MONGO_URL/],
    ['without INTERNAL_SECRET', { INTERNAL_SECRET: undefined }, /INTERNAL_SECRET/],
    [
      'with a certificates URL that is not a URL',
      { GOOGLE_CERTS_URL: 'certs' },
      /GOOGLE_CERTS_URL/,
    ],
    [
      'in production with development certificates over http',
      { NODE_ENV: 'production', GOOGLE_CERTS_URL: 'http://dev-idp:4010/certs' },
      /must be https:\/\/www.googleapis.com/,
    ],
    [
      'in production with certificates from another host',
      { NODE_ENV: 'production', GOOGLE_CERTS_URL: 'https://certs.example.com/oauth2/v1/certs' },
      /GOOGLE_CERTS_URL/,
    ],
  ])('refuses to start %s', (_case, env, message) => {
    expect(() => parse(env)).toThrow(message);
  });
});
