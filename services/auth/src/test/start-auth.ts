import { randomBytes } from 'node:crypto';
import { CSRF_COOKIE, Lifecycle, parseConfig } from '@platform/shared';
import {
  requestJson,
  startTestServer,
  testEnv,
  testLogger,
  uniqueName,
} from '@platform/shared/testing';
import { startDevIdp, type RunningDevIdp } from '../../../../tools/dev-idp/src/test/start-dev-idp';
import { compose } from '../compose';
import { configSchema } from '../config';
import { LOGIN_PATH } from '../login/login.routes';
import type { Models } from '../models';

export interface RunningAuth {
  url: string;
  idp: RunningDevIdp;
  accounts: Models['accounts'];
  close(): Promise<void>;
}

/**
 * The auth service as main.ts composes it, on an ephemeral port with a database of its own,
 * verifying tokens against a dev-idp started beside it (or against `certsUrl` when given).
 */
export async function startAuth(options: { certsUrl?: string } = {}): Promise<RunningAuth> {
  const logger = testLogger('auth');
  const lifecycle = new Lifecycle(logger);
  const idp = await startDevIdp();
  lifecycle.onShutdown('dev-idp', () => idp.close());
  const config = parseConfig(configSchema, {
    ...testEnv(),
    MONGO_DB: uniqueName('auth_test'),
    GOOGLE_CLIENT_ID: idp.clientId,
    GOOGLE_CERTS_URL: options.certsUrl ?? idp.certsUrl,
  });
  try {
    const { app, connection, models } = await compose(config, { logger, lifecycle });
    lifecycle.onShutdown('test database', () => connection.dropDatabase());
    const server = await startTestServer(app);
    lifecycle.onShutdown('test server', () => server.close());
    return {
      url: server.url,
      idp,
      accounts: models.accounts,
      close: () => lifecycle.shutdown('test over'),
    };
  } catch (err) {
    await lifecycle.shutdown('start failed');
    throw err;
  }
}

/**
 * Posts the login callback as the gateway would: the body and the g_csrf_token cookie, by default
 * equal to the body's csrfToken; `null` sends no cookie.
 */
export function postLogin(
  auth: RunningAuth,
  body: unknown,
  csrfCookie: string | null | undefined = (body as { csrfToken?: string })?.csrfToken,
) {
  return requestJson(`${auth.url}${LOGIN_PATH}`, {
    method: 'POST',
    body,
    headers: csrfCookie == null ? {} : { cookie: `${CSRF_COOKIE}=${csrfCookie}` },
  });
}

/** A Google subject no other test uses: 21 digits, as Google's are. */
export const uniqueSubject = () =>
  `1${randomBytes(8).readBigUInt64BE().toString().padStart(20, '0')}`;
