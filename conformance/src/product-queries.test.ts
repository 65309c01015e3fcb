import { Types, type FilterQuery, type Model } from 'mongoose';
import {
  afterCursorFilter,
  NEWEST_FIRST,
  syncIndexes,
  writeWithoutRelay,
  type CursorPosition,
} from '@platform/shared';
import { createModels as deploymentsModels } from '@platform/deployments/dist/models';
import { DeploymentsRepository } from '@platform/deployments/dist/deployments/deployments.repository';
import { liveServicesPipeline } from '@platform/deployments/dist/pipeline/restore-live-apps';
import { createModels as projectsModels } from '@platform/projects/dist/models';
import { deliveryModel } from '@platform/webhooks/dist/deliveries/deliveries.model';
import { webhookModel } from '@platform/webhooks/dist/webhooks/webhooks.model';
import { expectAggregateIndexServed, expectIndexServed, type ProductListQuery } from './plan';
import { openTestDatabase, type TestDatabase } from './support/database';

/**
 * Every list and every work-finding query the product sends is served by an index, on whatever
 * server the tests get: the services' own models (their schemas and indexes, built as each
 * service builds them), and each query in the shape the service sends it (the deployments list
 * through the repository's own filter; the others mirror their repository, named beside each).
 * Where one index is the query's own, the test names it; where several indexes start with the
 * query's equality fields, which one serves it is the server's planner's choice, and the promise
 * pinned is that an index bounds the read (no collection scan, no whole-index scan).
 */
describe('The product’s list and work queries are served by their indexes', () => {
  let db: TestDatabase;
  const id = () => new Types.ObjectId().toHexString();
  const accountId = id();
  const projectId = id();
  const serviceId = id();
  const webhookId = new Types.ObjectId();
  const position: CursorPosition = { createdAt: new Date(), id: id() };
  const deep = () => afterCursorFilter(position);
  const PAGE = 21;

  let models: ReturnType<typeof deploymentsModels>;
  let projects: ReturnType<typeof projectsModels>;
  let Webhook: Model<unknown>;
  let Delivery: Model<unknown>;

  beforeAll(async () => {
    db = await openTestDatabase('conformance_product');
    const { connection } = db;
    models = deploymentsModels(connection);
    projects = projectsModels(connection);
    Webhook = webhookModel(connection) as unknown as Model<unknown>;
    Delivery = deliveryModel(connection) as unknown as Model<unknown>;
    // An index is planned only for a collection that exists: syncIndexes creates both.
    await syncIndexes([...Object.values(models), ...Object.values(projects), Webhook, Delivery]);
  });
  afterAll(() => db?.drop());

  const ref = () => ({ accountId, projectId, serviceId });
  const deploymentsList = (statuses?: ('FAILED' | 'CANCELLED')[]) =>
    new DeploymentsRepository(models, writeWithoutRelay).listFilter(ref(), statuses);

  /** A list page as findPage sends it: the filter, newest first, a page's worth. */
  const firstPage = <T>(model: Model<T>, filter: FilterQuery<T>) =>
    model.find(filter).sort(NEWEST_FIRST).limit(PAGE);
  /** The same, after a cursor. */
  const deepPage = <T>(model: Model<T>, filter: FilterQuery<T>) =>
    firstPage(model, { ...filter, ...deep() });
  /** The delivery worker's claim (DeliveriesRepository.claimDue): the next due delivery. */
  const nextDueDelivery = (filter: FilterQuery<unknown> = {}) =>
    Delivery.find({
      status: 'pending',
      nextAttemptAt: { $lte: new Date() },
      leaseUntil: { $not: { $gt: new Date() } },
      ...filter,
    })
      .sort({ accountId: 1, nextAttemptAt: 1, _id: 1 })
      .limit(1);

  const cases = (): ProductListQuery[] => [
    // services/deployments: DeploymentsRepository.listInService (findPage)
    {
      name: "a service's deployments, first page",
      index: 'serviceId_1_createdAt_-1__id_-1',
      query: () => firstPage(models.deployments, deploymentsList()),
    },
    {
      name: "a service's deployments, a deep page",
      index: 'serviceId_1_createdAt_-1__id_-1',
      query: () => deepPage(models.deployments, deploymentsList()),
    },
    {
      name: "a service's deployments of some statuses, a deep page",
      query: () => deepPage(models.deployments, deploymentsList(['FAILED', 'CANCELLED'])),
    },
    // services/deployments: Claiming.claimNext (pipeline/claiming.ts). Two indexes start with
    // `status` ({status, createdAt}, {status, serviceId}): the planner's choice.
    {
      name: 'the pipeline’s next deployment to run',
      query: () =>
        models.deployments
          .find({ status: { $in: ['BUILDING', 'DEPLOYING'] }, leaseUntil: { $lte: new Date() } })
          .sort({ createdAt: 1 })
          .limit(1),
    },
    // ...and, per account looked at, its candidates' services' oldest deployment still to finish
    {
      name: 'the deployments still to finish of some services',
      query: () =>
        models.deployments.find(
          { serviceId: { $in: [serviceId, id()] }, status: { $in: ['BUILDING', 'DEPLOYING'] } },
          { serviceId: 1, createdAt: 1 },
        ),
    },
    // services/deployments: AccountLimits.usage (ACCOUNT_MAX_BUILDS, ACCOUNT_MAX_APPS), read by
    // every claim of a build and by the API to say why a deployment waits
    {
      name: "an account's builds held by a worker",
      index: 'accountId_1_status_1_serviceId_1_leaseUntil_1',
      query: () =>
        models.deployments.find(
          { accountId, status: 'BUILDING', leaseUntil: { $gt: new Date() } },
          { serviceId: 1 },
        ),
    },
    {
      name: "an account's services with a deployment DEPLOYED (its distinct serviceIds)",
      index: 'accountId_1_status_1_serviceId_1_leaseUntil_1',
      query: () => models.deployments.find({ accountId, status: 'DEPLOYED' }, { serviceId: 1 }),
    },
    // libs/shared: OutboxRelay's sweep
    {
      name: 'the outbox relay’s sweep of pending deployments',
      index: 'outboxPending_1',
      query: () => models.deployments.find({ outboxPending: true }).limit(100),
    },
    // services/projects: NamedResources.listLive (names/named-resources.repository.ts)
    {
      name: "an account's projects, a deep page",
      query: () => deepPage(projects.projects, { accountId, deletedAt: null }),
    },
    {
      name: "a project's services, a deep page",
      index: 'projectId_1_accountId_1_deletedAt_1_createdAt_-1__id_-1',
      query: () => deepPage(projects.services, { projectId, accountId, deletedAt: null }),
    },
    // services/webhooks: WebhooksRepository list, DeliveriesRepository list and claimDue
    {
      name: "a project's webhooks, a deep page",
      index: 'projectId_1_createdAt_-1__id_-1',
      query: () => deepPage(Webhook, { projectId }),
    },
    {
      name: "a webhook's deliveries, a deep page",
      index: 'webhookId_1_createdAt_-1__id_-1',
      query: () => deepPage(Delivery, { webhookId }),
    },
    // The worker takes accounts in turn: the next account after the last one served...
    {
      name: 'the delivery worker’s next due delivery, of the next account',
      query: () => nextDueDelivery({ accountId: { $gt: accountId } }),
    },
    // ...and, past the last account, from the first again.
    {
      name: 'the delivery worker’s next due delivery, starting over',
      query: () => nextDueDelivery(),
    },
  ];

  test.each(cases().map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await expectIndexServed(c.query(), c);
  });

  // services/deployments: DeploymentsRepository.latestDeployed, per service at every restore and
  // for each build (the live build is kept): one index entry read, in the index's order.
  test("a service's live deployment (its newest DEPLOYED one)", async () => {
    await expectIndexServed(
      models.deployments
        .findOne({ serviceId, status: 'DEPLOYED' })
        .sort({ createdAt: -1, _id: -1 }),
      { index: 'serviceId_1_status_1_createdAt_-1__id_-1', sortedByIndex: true },
    );
  });

  // services/deployments: restoreLiveApps (pipeline/restore-live-apps.ts), the services to restore.
  test('the services with a DEPLOYED deployment', async () => {
    await expectAggregateIndexServed(models.deployments, liveServicesPipeline(), {
      index: 'status_1_serviceId_1',
    });
  });
});
