import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from 'mongoose';
import { connectMongo } from '@platform/shared';
import { testLogger } from '@platform/shared/testing';
import { createModels, type Models } from '../models';
import { newCommitHash, useHarness } from '../test/harness';
import { buildService } from '../test/projects-stub';
import { Claiming } from './claiming';

// No pipeline in the harness: the racers are the claims of other replicas, each on a connection
// of its own, all sent at the same moment.
const h = useHarness();
const CONNECTIONS = 4;
const RACERS = 8;
const ROUNDS = 10;
const FLIP_ROUNDS = 30;
const WAITING = 6;
const LEASE_MS = 60_000;
// The work is bounded by rounds, not time; a round takes a second or two, many on a loaded
// machine. A test that ran out would race on in the background into the next one's claims, so
// jest's deadline is only a guard against a hang.
jest.setTimeout(10 * 60_000);
let connections: Connection[] = [];
let replicas: Models[] = [];

beforeAll(async () => {
  connections = await Promise.all(
    Array.from({ length: CONNECTIONS }, () =>
      connectMongo({ url: h.config.MONGO_URL, dbName: h.config.MONGO_DB, logger: testLogger() }),
    ),
  );
  replicas = connections.map(createModels);
});

afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
});

/** `count` deployments of new services of a new account, BUILDING, none claimed. */
async function waitingDeployments(count: number, accountId = buildService().accountId) {
  for (let i = 0; i < count; i++) {
    const service = h.projects.addService(buildService({ accountId }));
    const res = await h.api.trigger(service, { commitHash: newCommitHash() });
    expect(res.status).toBe(201);
  }
  return accountId;
}

/** The account's builds held by a worker now. */
const heldBuilds = (accountId: string) =>
  h.models.deployments.countDocuments({
    accountId,
    status: 'BUILDING',
    leaseUntil: { $gt: new Date() },
  });

/** Every racer asks for work at the same moment; then one more claims until none is left. */
async function race(limits: { maxBuilds: number; maxApps: number }) {
  const racers = Array.from(
    { length: RACERS },
    (_, n) => new Claiming(replicas[n % CONNECTIONS]!, 65_536, limits),
  );
  const raced = await Promise.all(racers.map((r, n) => r.claimNext(`racer-${n}`, LEASE_MS)));
  let after = 0;
  while (await racers[0]!.claimNext('latecomer', LEASE_MS)) after++;
  return { raced: raced.filter(Boolean).length, after };
}

/**
 * The race filled exactly `places` of the account's build places, all still held; then the
 * round's deployments go out of the way of the next round (final: nothing left to claim).
 */
async function expectPlacesFilled(
  round: number,
  accountId: string,
  { raced, after }: { raced: number; after: number },
  places: number,
) {
  expect({ round, claimed: raced + after, held: await heldBuilds(accountId) }).toEqual({
    round,
    claimed: places,
    held: places,
  });
  await h.models.deployments.updateMany(
    { accountId, status: 'BUILDING' },
    { $set: { status: 'CANCELLED', leaseOwner: null, leaseUntil: new Date(0) } },
  );
}

describe('racing replicas and the per-account limits', () => {
  it('of eight replicas claiming at once, never more than ACCOUNT_MAX_BUILDS of an account hold builds, and the places are filled', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const accountId = await waitingDeployments(WAITING);

      const claims = await race({ maxBuilds: 2, maxApps: 100 });

      await expectPlacesFilled(round, accountId, claims, 2);
    }
  });

  it('never both keep the last build place when racers see different deployments first (a service’s older one finishing mid-race)', async () => {
    for (let round = 0; round < FLIP_ROUNDS; round++) {
      const accountId = buildService().accountId;
      // The account's oldest waiting deployment waits for its service's older one, DEPLOYING
      // on a worker; that one finishes at some moment of the race, so racers that look before
      // it go past to the next deployment while those that look after take the first.
      const service = h.projects.addService(buildService({ accountId }));
      const older = await h.api.trigger(service, { commitHash: newCommitHash() });
      await h.models.deployments.updateOne(
        { _id: older.body.id },
        {
          $set: {
            status: 'DEPLOYING',
            leaseOwner: 'busy',
            leaseUntil: new Date(Date.now() + LEASE_MS),
          },
        },
      );
      await h.api.trigger(service, { commitHash: newCommitHash() });
      await waitingDeployments(WAITING - 1, accountId);
      const finish = async () => {
        await sleep(Math.random() * 20);
        await h.models.deployments.updateOne(
          { _id: older.body.id },
          {
            $set: {
              status: 'DEPLOYED',
              deployedAt: new Date(),
              leaseOwner: null,
              leaseUntil: new Date(0),
            },
          },
        );
      };

      const [claims] = await Promise.all([race({ maxBuilds: 1, maxApps: 100 }), finish()]);

      await expectPlacesFilled(round, accountId, claims, 1);
    }
  });

  it('of eight replicas claiming at once, only one takes an account’s last app place', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const accountId = buildService().accountId;
      // Two services of the account have their app live.
      await waitingDeployments(2, accountId);
      await h.models.deployments.updateMany(
        { accountId },
        { $set: { status: 'DEPLOYED', deployedAt: new Date() } },
      );
      await waitingDeployments(WAITING, accountId);

      const claims = await race({ maxBuilds: 100, maxApps: 3 });

      await expectPlacesFilled(round, accountId, claims, 1);
    }
  });
});
