import { z } from 'zod';

/**
 * The secrets published with the platform for local use (scripts/start.sh, docker-compose.yml's
 * defaults, the Kubernetes development overlay): anyone can read them, so a process started with
 * NODE_ENV=production refuses them (contracts.md, Trust). tools/manifest-check checks that every
 * secret those files define is listed here.
 */
export const EXAMPLE_SECRETS: readonly string[] = [
  'local-development-internal-secret-0123456789',
  'local-development-session-secret-0123456789',
  'local-dev:ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGU=',
  'dev-only-internal-secret-not-for-production-0000',
  'dev-only-session-secret-not-for-production-0000',
  'dev-only:ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGV2ZGU=',
  // Kafka users' passwords: the local broker's (scripts/infra/kafka.sh, docker-compose.yml)...
  'local-development-kafka-admin-0123456789',
  'local-development-kafka-projects-0123456789',
  'local-development-kafka-deployments-0123456789',
  'local-development-kafka-webhooks-0123456789',
  // ...and the Kubernetes development overlay's.
  'dev-only-kafka-projects-not-for-production-0000',
  'dev-only-kafka-deployments-not-for-production-0000',
  'dev-only-kafka-webhooks-not-for-production-0000',
  // MongoDB's and Redis's passwords: docker-compose.yml's and the Kubernetes development overlay's.
  'local-development-mongo-0123456789',
  'local-development-redis-0123456789',
  'dev-only-mongo-not-for-production-0000',
  'dev-only-redis-not-for-production-0000',
];

/** In production, every setting whose value is a published example secret, one line each. */
export function exampleSecretsIn(env: Record<string, unknown>): string[] {
  if (env.NODE_ENV !== 'production') return [];
  return Object.entries(env)
    .filter(([, value]) => typeof value === 'string' && EXAMPLE_SECRETS.includes(value))
    .map(([name]) => `${name}: is a published example value; production needs a secret of its own`);
}

/**
 * Parses `env` against `schema` once, at start-up. On any problem it prints every issue, one
 * line each, and exits 1, so a misconfigured process never half-starts. Only `main.ts` calls it.
 * In production a published example secret is such a problem.
 */
export function loadConfig<S extends z.ZodTypeAny>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): Readonly<z.infer<S>> {
  const result = schema.safeParse(env);
  const problems = result.success
    ? exampleSecretsIn(result.data as Record<string, unknown>)
    : result.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
  if (!result.success || problems.length > 0) {
    for (const problem of problems) process.stderr.write(`config: ${problem}\n`);
    process.exit(1);
  }
  return Object.freeze(result.data);
}

/** Same as loadConfig, but throws instead of exiting: for tests of a service's config schema. */
export function parseConfig<S extends z.ZodTypeAny>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const config = schema.parse(env);
  const problems = exampleSecretsIn(config as Record<string, unknown>);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return config;
}

/** A comma-separated list, trimmed, empty items dropped. */
export const commaList = () =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1));

const booleanString = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');

/** Environment variables every service reads. Extend with `.extend({...})` per service. */
export const baseEnv = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** pino level: fatal, error, warn, info, debug, trace, silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Shared by the gateway (signs) and the services (verify) for the internal identity header. */
  INTERNAL_SECRET: z.string().min(32, 'must be at least 32 characters'),
  /**
   * The address the process listens on (runService): 127.0.0.1, this machine only, unless a
   * container sets 0.0.0.0 (or `::`).
   */
  HOST: z.string().min(1).default('127.0.0.1'),
});

export const mongoEnv = z.object({
  /** MongoDB connection string, e.g. mongodb://127.0.0.1:27017 */
  MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL'),
});

export const portEnv = (defaultPort: number) =>
  z.coerce.number().int().min(0).max(65535).default(defaultPort);

export const booleanEnv = (defaultValue: boolean) =>
  booleanString.optional().transform((v) => v ?? defaultValue);

/**
 * The Kafka brokers and how to log in (contracts.md, Trust: connections authenticate with
 * SASL/SCRAM-SHA-512, over TLS in docker-compose and Kubernetes). Each service has its own user,
 * which the broker's ACLs let write only its own topics. Without a user the client connects
 * unauthenticated, which the platform's brokers refuse (and openKafka refuses in production).
 */
export const kafkaEnv = z.object({
  /** Comma-separated host:port list of Kafka brokers. */
  KAFKA_BROKERS: commaList(),
  /** The service's own Kafka user (SASL). Set together with KAFKA_SASL_PASSWORD. */
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  /** Its password: a secret (never logged). */
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  /** The SASL mechanism: SCRAM-SHA-512 (the platform's), or SCRAM-SHA-256 for another broker. */
  KAFKA_SASL_MECHANISM: z.enum(['scram-sha-512', 'scram-sha-256']).default('scram-sha-512'),
  /** Connect over TLS (SASL_SSL): true in docker-compose and Kubernetes; false on loopback. */
  KAFKA_TLS: booleanEnv(false),
  /** PEM file of the CA that signed the brokers' certificates; unset: the system's CAs. */
  KAFKA_TLS_CA_FILE: z.string().min(1).optional(),
});

/**
 * What every backend service reads (baseEnv), its port and its own database, default names
 * given: `serviceEnv({ port: 4002, database: 'platform_projects' }).extend({ … })`.
 */
export const serviceEnv = (defaults: { port: number; database: string }) =>
  baseEnv.merge(mongoEnv).extend({
    PORT: portEnv(defaults.port),
    /** The service's own database: its collections live there and nowhere else. */
    MONGO_DB: z.string().min(1).default(defaults.database),
  });

/** The brokers, and for a service that consumes events its group and where a new group starts. */
export const consumerEnv = (groupId: string) =>
  kafkaEnv.extend({
    /** The consumer group; every replica of the service shares it. */
    KAFKA_GROUP_ID: z.string().min(1).default(groupId),
    /**
     * Where a new consumer group starts: true (default) misses no event; false starts at the end
     * of the topics (a test's or an e2e run's throwaway group).
     */
    KAFKA_FROM_BEGINNING: booleanEnv(true),
  });
