import {
  Scheduler,
  createSecretBox,
  localSourcePolicy,
  openDatabase,
  openKafka,
  startServiceConsumer,
  startOutboxRelay,
  type Runtime,
} from '@platform/shared';
import { createApp } from './app';
import type { Config } from './config';
import { CONSUMED_TOPICS, eventHandler } from './events/events.consumer';
import { createModels } from './models';
import { ProjectsRepository } from './projects/projects.repository';
import { ProjectsService } from './projects/projects.service';
import { ServicesRepository } from './services/services.repository';
import { ServicesService } from './services/services.service';
import { VariablesRepository } from './variables/variables.repository';
import { VariablesService } from './variables/variables.service';

/**
 * The projects service's composition root, for main.ts (runService) and every test alike: opens
 * Mongo, the outbox relay and the event consumer, each registering its closer as it opens, and
 * builds the HTTP app on them. Nothing here needs a seam: tests change only the configuration.
 */
export async function compose(config: Config, runtime: Runtime) {
  const { logger } = runtime;
  const secretBox = createSecretBox(config);
  const { connection, models } = await openDatabase(config, runtime, createModels);

  const kafka = await openKafka(config, runtime, 'projects');
  // Projects and services carry an outbox; variables do not.
  const relay = startOutboxRelay(kafka, [models.projects, models.services], runtime);

  const projectsRepository = new ProjectsRepository(models.projects, relay);
  const servicesRepository = new ServicesRepository(models.services, relay);
  const variablesRepository = new VariablesRepository(models.variables);
  await startServiceConsumer(config, runtime, {
    kafka,
    connection,
    topics: CONSUMED_TOPICS,
    handle: eventHandler({
      projects: projectsRepository,
      services: servicesRepository,
      variables: variablesRepository,
      appsUrlTemplate: config.APPS_URL_TEMPLATE,
      logger,
    }),
  });

  if (config.SOURCE_ALLOW_LOCAL.allow !== 'none')
    logger.warn(
      { SOURCE_ALLOW_LOCAL: config.SOURCE_ALLOW_LOCAL },
      'service repositories may be local',
    );
  const services = new ServicesService({
    projects: projectsRepository,
    services: servicesRepository,
    sources: { local: localSourcePolicy(config) },
  });
  const variables = new VariablesService({
    services,
    servicesRepository,
    variables: variablesRepository,
    secretBox,
  });
  // Values sealed under an older key are sealed anew under ENCRYPTION_KEY, so it can be retired.
  const scheduler = new Scheduler(logger);
  scheduler.every({
    name: 'seal secret variables under ENCRYPTION_KEY',
    everyMs: config.RESEAL_INTERVAL,
    runAtStart: true,
    run: async () => {
      const { resealed, unreadable } = await variables.resealSecrets();
      if (resealed > 0) logger.info({ resealed }, 'secret variables sealed under ENCRYPTION_KEY');
      if (unreadable > 0) {
        logger.error({ unreadable }, 'secret variables no configured key opens: left as they are');
      }
    },
  });
  runtime.lifecycle.onShutdown('housekeeping', () => scheduler.stop());
  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    projects: new ProjectsService({ projects: projectsRepository }),
    services,
    variables,
  });
  return { app, connection, models, kafka, relay, secretBox, variables };
}
