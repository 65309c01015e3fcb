import { createServer } from 'node:http';
import {
  Lifecycle,
  closeHttpServer,
  connectMongo,
  createLogger,
  createMetrics,
  loadConfig,
  syncIndexes,
} from '@platform/shared';
import { accountModel } from './accounts/accounts.model';
import { createApp } from './app';
import { authEnv } from './config';
import { createGoogleIdTokenVerifier } from './login/google-id-token';

async function main(): Promise<void> {
  const config = loadConfig(authEnv);
  const logger = createLogger('auth', config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger);
  lifecycle.handleSignals();

  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  lifecycle.onShutdown('mongo', () => connection.close());
  await syncIndexes([accountModel(connection)]);

  const app = createApp({
    logger,
    metrics: createMetrics('auth'),
    connection,
    internalSecret: config.INTERNAL_SECRET,
    verifyIdToken: createGoogleIdTokenVerifier({
      clientId: config.GOOGLE_CLIENT_ID,
      certsUrl: config.GOOGLE_CERTS_URL,
    }),
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  // Registered last, closed first: in-flight requests finish before Mongo closes.
  lifecycle.onShutdown('http', () => closeHttpServer(server));
  logger.info({ port: config.PORT }, 'auth listening');
}

main().catch((err) => {
  process.stderr.write(`auth failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
