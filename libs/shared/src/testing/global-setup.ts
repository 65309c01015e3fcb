import { resolveTestInfra, type TestInfra } from './infra';

declare global {
  var __PLATFORM_TEST_INFRA__: TestInfra | undefined;
}

/**
 * Jest global setup: resolves the infrastructure once per run and hands the URLs to every
 * worker through the environment. With several jest projects it runs once per project; after
 * the first, the environment is already set and it returns at once.
 */
/** A URL as it may be printed: its password (the local Redis has one) replaced. */
const withoutPassword = (url: string) => url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:****@');

export default async function globalSetup(): Promise<void> {
  if (globalThis.__PLATFORM_TEST_INFRA__) return;
  const infra = await resolveTestInfra();
  globalThis.__PLATFORM_TEST_INFRA__ = infra;
  process.env.MONGO_URL = infra.MONGO_URL;
  process.env.KAFKA_BROKERS = infra.KAFKA_BROKERS;
  process.env.REDIS_URL = infra.REDIS_URL;
  Object.assign(process.env, infra.kafkaAuth);
  process.stderr.write(
    `\ntest infrastructure (${infra.source}): ${infra.MONGO_URL} ${infra.KAFKA_BROKERS}` +
      ` (Kafka user: ${infra.kafkaAuth.KAFKA_SASL_USERNAME ?? 'none'}) ${withoutPassword(infra.REDIS_URL)}\n`,
  );
}
