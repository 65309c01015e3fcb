import { connectMongo, createMetrics, syncIndexes, type Runtime } from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { createGoogleIdTokenVerifier } from './login/google-id-token';
import { createModels } from './models';

/**
 * The auth service's composition root, for main.ts and the tests alike: MongoDB (indexes
 * created), the Google ID-token verifier (GOOGLE_CERTS_URL points it at dev-idp or a test key
 * set), and the app.
 */
export async function compose(config: Config, { logger, lifecycle }: Runtime) {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  const models = createModels(connection);
  await syncIndexes(models);

  const app = createApp({
    logger,
    metrics: createMetrics('auth'),
    connection,
    models,
    internalSecret: config.INTERNAL_SECRET,
    verifyIdToken: createGoogleIdTokenVerifier({
      clientId: config.GOOGLE_CLIENT_ID,
      certsUrl: config.GOOGLE_CERTS_URL,
    }),
  });
  return { app, connection, models };
}
