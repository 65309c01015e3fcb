import { testInfraUrls, TEST_INTERNAL_SECRET } from './helpers';
import { kafkaAuthVariables } from './infra';

/**
 * The environment a service's config schema is parsed from in a test, as `main.ts` would read it
 * from `process.env`: the test servers' URLs, the test secret, a free port, silent logs. Tests add
 * their own values (`{ ...testEnv(), MONGO_DB: uniqueName('projects_test') }`) and parse it with
 * the service's own schema, so the tested configuration is the shipped one.
 */
export function testEnv(): Record<string, string> {
  const { mongoUrl, kafkaBrokers, redisUrl } = testInfraUrls();
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    MONGO_URL: mongoUrl,
    KAFKA_BROKERS: kafkaBrokers.join(','),
    // The Kafka login the run was given (the local broker's admin: tests' groups and topics
    // are throwaway ones of any name), not the services' own passwords.
    ...Object.fromEntries(
      Object.entries(kafkaAuthVariables(process.env)).filter(
        ([name]) => !name.startsWith('KAFKA_SASL_PASSWORD_'),
      ),
    ),
    REDIS_URL: redisUrl,
  };
}
