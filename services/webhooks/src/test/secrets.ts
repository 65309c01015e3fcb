import { createSecretBox } from '@platform/shared';
import { WebhookSecrets } from '../webhooks/webhook-secrets';
import { TEST_ENCRYPTION_KEY } from './test-service';

/**
 * WebhookSecrets over `key` (the test service's own unless given), previous keys after it: to
 * open what a test service stored, or to seal a record as another key would have.
 */
export const testSecrets = (key = TEST_ENCRYPTION_KEY, ...previous: string[]) =>
  new WebhookSecrets(createSecretBox({ ENCRYPTION_KEY: key, ENCRYPTION_PREVIOUS_KEYS: previous }));
