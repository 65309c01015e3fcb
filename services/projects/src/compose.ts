import {
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

/**
 * The projects service's composition root, for main.ts (runService) and every test alike: opens
 * Mongo, the outbox relay and the deletion consumer, each registering its closer as it opens, and
 * builds the HTTP app on them. Nothing here needs a seam: tests change only the configuration.
 */
export async function compose(config: Config, runtime: Runtime) {
  const { logger } = runtime;
  const { connection, models } = await openDatabase(config, runtime, createModels);

  const kafka = await openKafka(config, runtime, 'projects');
  const relay = startOutboxRelay(kafka, Object.values(models), runtime);

  const projectsRepository = new ProjectsRepository(models.projects, relay);
  const servicesRepository = new ServicesRepository(models.services, relay);
  await startServiceConsumer(config, runtime, {
    kafka,
    connection,
    topics: CONSUMED_TOPICS,
    handle: eventHandler({ projects: projectsRepository, services: servicesRepository, logger }),
  });

  const app = createApp({
    logger,
    internalSecret: config.INTERNAL_SECRET,
    connection,
    projects: new ProjectsService({ projects: projectsRepository }),
    services: new ServicesService({ projects: projectsRepository, services: servicesRepository }),
  });
  return { app, connection, models, kafka, relay };
}
