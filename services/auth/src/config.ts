import { serviceEnv } from '@platform/shared';
import { z } from 'zod';

/** Where Google publishes its token-signing certificates: the only ones production trusts. */
const GOOGLE_CERTS_HOST = 'www.googleapis.com';

export const configSchema = serviceEnv({ port: 4001, database: 'platform_auth' })
  .extend({
    /** The OAuth client id that Google ID tokens must be issued for (`aud`). */
    GOOGLE_CLIENT_ID: z.string().min(1),
    /**
     * Where the token-signing certificates are read; unset = Google's own (oauth2/v1/certs).
     * Development points it at dev-idp; production refuses anything but https://www.googleapis.com.
     */
    GOOGLE_CERTS_URL: z.string().url().optional(),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production' || env.GOOGLE_CERTS_URL === undefined) return;
    const url = new URL(env.GOOGLE_CERTS_URL);
    if (url.protocol !== 'https:' || url.hostname !== GOOGLE_CERTS_HOST) {
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_CERTS_URL'],
        message: `must be https://${GOOGLE_CERTS_HOST}/… in production (a development identity provider signs for anyone)`,
      });
    }
  });

export type Config = z.infer<typeof configSchema>;
