import { parseConfig } from '@platform/shared';
import { authEnv } from './config';

const required = {
  INTERNAL_SECRET: 'x'.repeat(32),
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  GOOGLE_CLIENT_ID: 'client.apps.googleusercontent.com',
};

describe('auth config', () => {
  it('defaults to port 4001, the platform_auth database and Google’s own certificates', () => {
    const config = parseConfig(authEnv, required);

    expect(config).toMatchObject({ PORT: 4001, MONGO_DB: 'platform_auth' });
    expect(config.GOOGLE_CERTS_URL).toBeUndefined();
  });

  it.each(['GOOGLE_CLIENT_ID', 'MONGO_URL', 'INTERNAL_SECRET'])('requires %s', (name) => {
    expect(() => parseConfig(authEnv, { ...required, [name]: undefined })).toThrow(name);
  });

  it('refuses a certificates URL that is not a URL', () => {
    expect(() => parseConfig(authEnv, { ...required, GOOGLE_CERTS_URL: 'certs' })).toThrow(
      /GOOGLE_CERTS_URL/,
    );
  });
});
