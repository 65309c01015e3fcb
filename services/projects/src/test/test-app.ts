import { connectMongo, Lifecycle, parseConfig, TOPICS, type Logger } from '@platform/shared';
import {
  collectMessages,
  startTestServer,
  testEnv,
  testLogger,
  uniqueName,
  useRunning,
} from '@platform/shared/testing';
import { compose } from '../compose';
import { configSchema, type Config } from '../config';

/** The test key of secret variables (a fixed one: tests open what the service sealed). */
export const TEST_ENCRYPTION_KEY = `test:${Buffer.alloc(32, 7).toString('base64')}`;

export type TestApp = Awaited<ReturnType<typeof compose>> & {
  url: string;
  /** The event consumer's group (it names the handled-event records). */
  groupId: string;
  config: Config;
  close(): Promise<void>;
};

/**
 * The service as main.ts starts it (the same compose), in the test process: its own database,
 * its own consumer group starting at the end of the topics (other files' deletions are none of
 * this file's business), HTTP on a free port; `env` adds settings, `logger` replaces the silent one. `close` shuts it down as SIGTERM would, then drops
 * the database.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: {
    logger?: Logger;
    /** Another instance's database: left to it at close. */ shared?: boolean;
  } = {},
): Promise<TestApp> {
  const config = parseConfig(configSchema, {
    ...testEnv(),
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    MONGO_DB: uniqueName('projects_test'),
    KAFKA_GROUP_ID: uniqueName('projects-test'),
    KAFKA_FROM_BEGINNING: 'false',
    ...env,
  });
  const logger = options.logger ?? testLogger('projects');
  const lifecycle = new Lifecycle(logger);
  const close = async () => {
    await lifecycle.shutdown('test over');
    if (!options.shared) await dropDatabase(config);
  };
  try {
    const composed = await compose(config, { logger, lifecycle });
    const server = await startTestServer(composed.app);
    lifecycle.onShutdown('http server', () => server.close());
    return { ...composed, url: server.url, groupId: config.KAFKA_GROUP_ID, config, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function dropDatabase(config: Config): Promise<void> {
  const connection = await connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    logger: testLogger('projects'),
  });
  await connection.dropDatabase();
  await connection.close();
}

/**
 * What reaches project.deleted and service.deleted while the file's tests run (a collector
 * started after `app`, stopped after the tests).
 */
export function useDeletionEvents(app: () => TestApp) {
  return useRunning(async () => {
    const collector = await collectMessages(app().kafka, [
      TOPICS.projectDeleted,
      TOPICS.serviceDeleted,
    ]);
    return { ...collector, close: () => collector.stop() };
  });
}
