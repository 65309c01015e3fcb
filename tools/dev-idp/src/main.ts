import { createServer } from 'node:http';
import { Lifecycle, closeHttpServer, createLogger, loadConfig } from '@platform/shared';
import { createApp } from './app';
import { devIdpEnv } from './config';
import { loadOrCreateSigningKey } from './keys/keys';

async function main(): Promise<void> {
  const config = loadConfig(devIdpEnv);
  const logger = createLogger('dev-idp', config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger);
  lifecycle.handleSignals();

  const key = await loadOrCreateSigningKey(config.KEY_FILE);
  const server = createServer(createApp({ logger, key, clientId: config.GOOGLE_CLIENT_ID }));
  await new Promise<void>((resolve) => server.listen(config.PORT, resolve));
  lifecycle.onShutdown('http', () => closeHttpServer(server));
  logger.info(
    { port: config.PORT, kid: key.kid, persisted: Boolean(config.KEY_FILE) },
    'dev-idp listening',
  );
}

main().catch((err) => {
  process.stderr.write(`dev-idp failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
