import { baseEnv, mongoEnv, portEnv } from '@platform/shared';
import { z } from 'zod';

export const configSchema = baseEnv.merge(mongoEnv).extend({
  PORT: portEnv(4001),
  /** The database this service owns. */
  MONGO_DB: z.string().min(1).default('platform_auth'),
  /** The OAuth client id that Google ID tokens must be issued for (`aud`). */
  GOOGLE_CLIENT_ID: z.string().min(1),
  /** Where the token-signing certificates are read; unset = Google's own (oauth2/v1/certs). */
  GOOGLE_CERTS_URL: z.string().url().optional(),
});

export type Config = z.infer<typeof configSchema>;
