import { z } from 'zod';
import {
  consumerEnv,
  durationEnv,
  encryptionEnv,
  localSourcesEnv,
  serviceEnv,
} from '@platform/shared';

/** The projects service's environment (docs/architecture.md, Processes). */
export const configSchema = serviceEnv({ port: 4002, database: 'platform_projects' })
  .merge(consumerEnv('projects'))
  .merge(encryptionEnv)
  /**
   * SOURCE_ALLOW_LOCAL: `true` lets a service's repository be `http://`, on a host with a private
   * address, or `file://` anywhere but the platform's own files (the local stack's fixtures); an
   * absolute directory lets it be `file://` under that directory only; `false` (default) neither.
   * Anything but `false` is refused with NODE_ENV=production. XDG_CACHE_HOME and HOME say where
   * the platform's `platform-dev` files are, which no repository may be.
   */
  .merge(localSourcesEnv)
  .extend({
    /**
     * How often secret variables sealed under an older key (ENCRYPTION_PREVIOUS_KEYS) are sealed
     * anew under ENCRYPTION_KEY (also at start).
     */
    RESEAL_INTERVAL: durationEnv('1h', { min: '100ms' }),
    /**
     * Where a service's live deployment answers: `{serviceId}` is replaced by its id. The same
     * URL across deployments (the gateway routes `<serviceId>.localhost` to the local runtime).
     */
    APPS_URL_TEMPLATE: z
      .string()
      .default('http://{serviceId}.localhost:8080')
      .refine(
        (template) =>
          template.includes('{serviceId}') &&
          /^https?:\/\//.test(template) &&
          URL.canParse(template.replace('{serviceId}', 'x')),
        'must be an http(s) URL containing {serviceId}',
      ),
  })
  .refine(
    (config) => !(config.NODE_ENV === 'production' && config.SOURCE_ALLOW_LOCAL.allow !== 'none'),
    {
      message: 'is a development setting, refused with NODE_ENV=production',
      path: ['SOURCE_ALLOW_LOCAL'],
    },
  );

export type Config = z.infer<typeof configSchema>;
