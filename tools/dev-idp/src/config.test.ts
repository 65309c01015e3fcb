import { parseConfig } from '@platform/shared';
import { configSchema } from './config';

describe('dev-idp config', () => {
  it('defaults to port 4010 and an in-memory key', () => {
    const config = parseConfig(configSchema, { GOOGLE_CLIENT_ID: 'client' });

    expect(config).toMatchObject({
      PORT: 4010,
      GOOGLE_CLIENT_ID: 'client',
      NODE_ENV: 'development',
    });
    expect(config.KEY_FILE).toBeUndefined();
  });

  it('refuses to start when NODE_ENV is production', () => {
    expect(() =>
      parseConfig(configSchema, { GOOGLE_CLIENT_ID: 'client', NODE_ENV: 'production' }),
    ).toThrow(/never runs in production/);
  });

  it('requires the client id it mints tokens for', () => {
    expect(() => parseConfig(configSchema, {})).toThrow(/GOOGLE_CLIENT_ID/);
  });
});
