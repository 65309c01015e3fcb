import { serviceEnv } from '@platform/shared';
import { z } from 'zod';

export const configSchema = serviceEnv({ port: 4001, database: 'platform_auth' }).extend({
  /** The OAuth client id that Google ID tokens must be issued for (`aud`). */
  GOOGLE_CLIENT_ID: z.string().min(1),
  /** Where the token-signing certificates are read; unset = Google's own (oauth2/v1/certs). */
  GOOGLE_CERTS_URL: z.string().url().optional(),
});

export type Config = z.infer<typeof configSchema>;
