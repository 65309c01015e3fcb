import type { Runtime } from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { loadOrCreateSigningKey } from './keys/keys';

/**
 * dev-idp's composition root, for main.ts (runService) and the tests alike: the signing key
 * (KEY_FILE's, or a new one in memory) and the app. It opens nothing that needs closing.
 */
export async function compose(config: Config, { logger }: Runtime) {
  const key = await loadOrCreateSigningKey(config.KEY_FILE);
  logger.info({ kid: key.kid, persisted: Boolean(config.KEY_FILE) }, 'signing key loaded');
  const app = createApp({ logger, key, clientId: config.GOOGLE_CLIENT_ID });
  return { app, key };
}
