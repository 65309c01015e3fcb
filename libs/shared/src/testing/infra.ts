import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Where the tests' MongoDB, Kafka and Redis come from, in order:
 * 1. the environment (MONGO_URL, KAFKA_BROKERS, REDIS_URL all set): used as given;
 * 2. a Docker engine that answers: testcontainers starts mongo:7, apache/kafka:3.9.1, redis:7;
 * 3. otherwise the project's own local servers (scripts/infra/infra.sh), started if needed.
 */
export interface TestInfra {
  MONGO_URL: string;
  KAFKA_BROKERS: string;
  REDIS_URL: string;
  /** How to log in to Kafka: the KAFKA_SASL_* and KAFKA_TLS* variables (kafkaAuthVariables). */
  kafkaAuth: Record<string, string>;
  source: 'environment' | 'testcontainers' | 'local';
  stop(): Promise<void>;
}

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '../../../..');
export const INFRA_SCRIPT = path.join(REPO_ROOT, 'scripts/infra/infra.sh');

/**
 * The Kafka login variables among `vars`: KAFKA_SASL_USERNAME/PASSWORD/MECHANISM and KAFKA_TLS*
 * (what clients use: the local broker's admin), and KAFKA_SASL_PASSWORD_<SERVICE> (each service's
 * own user, for the tests of the broker's ACLs).
 */
export function kafkaAuthVariables(
  vars: Record<string, string | undefined>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(vars).filter(
      (entry): entry is [string, string] =>
        /^KAFKA_(SASL_|TLS)/.test(entry[0]) && entry[1] !== undefined && entry[1] !== '',
    ),
  );
}

function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
      stdio: 'ignore',
      timeout: 5_000,
    });
    return true;
  } catch {
    return false;
  }
}

async function startContainers(): Promise<TestInfra> {
  // Loaded only here: production images are installed without dev dependencies.
  const { GenericContainer, Wait } = await import('testcontainers');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const [mongo, redis, kafka] = await Promise.all([
    new GenericContainer('mongo:7')
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forListeningPorts())
      .start(),
    new GenericContainer('redis:7')
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forListeningPorts())
      .start(),
    new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start(),
  ]);
  return {
    MONGO_URL: `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}`,
    REDIS_URL: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    KAFKA_BROKERS: `${kafka.getHost()}:${kafka.getMappedPort(9093)}`,
    // This container's broker has no SASL: the tests of authentication need the local one.
    kafkaAuth: {},
    source: 'testcontainers',
    stop: async () => {
      await Promise.all([mongo.stop(), redis.stop(), kafka.stop()]);
    },
  };
}

/** `infra.sh url` prints NAME=value lines. */
function parseAssignments(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.trim().match(/^([A-Z_]+)=(.*)$/))
      .filter((m): m is RegExpMatchArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
}

async function startLocalServers(): Promise<TestInfra> {
  await run('bash', [INFRA_SCRIPT, 'start', 'all'], { maxBuffer: 16 * 1024 * 1024 });
  const { stdout } = await run('bash', [INFRA_SCRIPT, 'url', 'all']);
  const urls = parseAssignments(stdout);
  const { MONGO_URL, KAFKA_BROKERS, REDIS_URL } = urls;
  if (!MONGO_URL || !KAFKA_BROKERS || !REDIS_URL) {
    throw new Error(`infra.sh url gave incomplete URLs: ${stdout}`);
  }
  // Local servers stay up after the run: the next run starts in seconds. `npm run infra stop`.
  return {
    MONGO_URL,
    KAFKA_BROKERS,
    REDIS_URL,
    kafkaAuth: kafkaAuthVariables(urls),
    source: 'local',
    stop: async () => undefined,
  };
}

export async function resolveTestInfra(env: NodeJS.ProcessEnv = process.env): Promise<TestInfra> {
  const { MONGO_URL, KAFKA_BROKERS, REDIS_URL } = env;
  if (MONGO_URL && KAFKA_BROKERS && REDIS_URL) {
    return {
      MONGO_URL,
      KAFKA_BROKERS,
      REDIS_URL,
      kafkaAuth: kafkaAuthVariables(env),
      source: 'environment',
      stop: async () => undefined,
    };
  }
  if (dockerAnswers()) return startContainers();
  return startLocalServers();
}
