import type { Connection } from 'mongoose';
import { connectMongo, createMetrics, syncIndexes } from '@platform/shared';
import {
  TEST_INTERNAL_SECRET,
  requestJson,
  startTestServer,
  testInfraUrls,
  testLogger,
  uniqueName,
} from '@platform/shared/testing';
import { startDevIdp, type RunningDevIdp } from '../../../../tools/dev-idp/src/test/start-dev-idp';
import { accountModel } from '../accounts/accounts.model';
import { createApp } from '../app';
import { createGoogleIdTokenVerifier } from '../login/google-id-token';
import { LOGIN_PATH } from '../login/login.routes';

export interface RunningAuth {
  url: string;
  idp: RunningDevIdp;
  connection: Connection;
  accounts: ReturnType<typeof accountModel>;
  close(): Promise<void>;
}

/**
 * The auth app on an ephemeral port with its own database, verifying tokens against a dev-idp
 * started beside it (or against `certsUrl` when given).
 */
export async function startAuth(options: { certsUrl?: string } = {}): Promise<RunningAuth> {
  const logger = testLogger('auth');
  const idp = await startDevIdp();
  const connection = await connectMongo({
    url: testInfraUrls().mongoUrl,
    dbName: uniqueName('auth'),
    logger,
  });
  const accounts = accountModel(connection);
  await syncIndexes([accounts]);
  const app = createApp({
    logger,
    metrics: createMetrics('auth'),
    connection,
    internalSecret: TEST_INTERNAL_SECRET,
    verifyIdToken: createGoogleIdTokenVerifier({
      clientId: idp.clientId,
      certsUrl: options.certsUrl ?? idp.certsUrl,
    }),
  });
  const server = await startTestServer(app);
  return {
    url: server.url,
    idp,
    connection,
    accounts,
    close: async () => {
      await server.close();
      await connection.dropDatabase();
      await connection.close();
      await idp.close();
    },
  };
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
    headers: csrfCookie == null ? {} : { cookie: `g_csrf_token=${csrfCookie}` },
  });
}
