import { useHarness } from '../test/harness';
import type { OwnedService } from '../test/projects-stub';
import type { DeploymentStatus } from './status';

// No pipeline in the harness: a deployment nobody holds stays BUILDING; the tests that need one
// held run a worker of their own (h.withWorker).
const h = useHarness();

/** A build that a cancel stops (30 s otherwise), or that fails after a moment for `fail`. */
const BUILD = {
  TEST_BUILD:
    'echo "build started"; if [ "$COMMIT_MESSAGE" = fail ]; then sleep 0.3; exit 3; fi; sleep 30',
};

/** Each case is run this many times, the readers racing the change every time. */
const ROUNDS = 6;
/** Readers of each deployment, polling as fast as they can: through the API, and the repository. */
const API_READERS = 3;
const REPOSITORY_READERS = 1;
/** A reader that has not seen the final status after this many reads fails the test. */
const MAX_READS = 4000;

interface Read {
  status: DeploymentStatus;
  logs: string;
}

/**
 * Reads the deployment until it is CANCELLED or FAILED, through the API or the repository, as
 * fast as the answers come; every read is kept.
 */
async function readUntilEnded(
  read: () => Promise<Read>,
  stop: { ended: boolean },
): Promise<Read[]> {
  const reads: Read[] = [];
  while (!stop.ended) {
    if (reads.length >= MAX_READS) throw new Error(`not ended after ${MAX_READS} reads`);
    const seen = await read();
    reads.push(seen);
    if (seen.status === 'CANCELLED' || seen.status === 'FAILED') return reads;
  }
  return reads;
}

/**
 * Starts the readers of `id`, runs `end` while they read, and returns every read, once each
 * reader has seen the deployment ended.
 */
async function raceReaders(service: OwnedService, id: string, end: () => Promise<unknown>) {
  const stop = { ended: false };
  const viaApi = async (): Promise<Read> => {
    const res = await h.api.get(service, id);
    if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
    return { status: res.body.status, logs: res.body.logs };
  };
  const viaRepository = async (): Promise<Read> => {
    const found = await h.repository.findInService(service, id);
    if (!found) throw new Error('the repository lost the deployment');
    return { status: found.status, logs: found.logs };
  };
  const readers = [
    ...Array.from({ length: API_READERS }, () => readUntilEnded(viaApi, stop)),
    ...Array.from({ length: REPOSITORY_READERS }, () => readUntilEnded(viaRepository, stop)),
  ];
  try {
    await end();
    return (await Promise.all(readers)).flat();
  } catch (err) {
    stop.ended = true;
    await Promise.allSettled(readers);
    throw err;
  }
}

/** The reads that saw the deployment ended, each with whether its log said why. */
function endedReads(reads: Read[], final: DeploymentStatus, reason: string) {
  const ended = reads.filter((r) => r.status === final);
  return {
    ended: ended.length,
    withoutReason: ended.filter((r) => !r.logs.includes(reason)).map((r) => r.logs),
  };
}

/** A second deployment of the service: newest wins cancels the first. */
async function supersede(service: OwnedService): Promise<string> {
  const res = await h.api.trigger(service, { commitHash: h.firstCommit.hash });
  if (res.status !== 201) throw new Error(`the trigger answered ${res.status}`);
  return res.body.id as string;
}

async function cancel(service: OwnedService, id: string): Promise<void> {
  const res = await h.api.cancel(service, id);
  if (res.status !== 200) throw new Error(`the cancel answered ${res.status}`);
}

describe('a deployment read as CANCELLED or FAILED has the reason in its log', () => {
  it.each(['nobody holds it', 'its build is running'] as const)(
    'when superseded by a newer deployment while %s',
    async (held) => {
      const run = async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const { service, id } = await h.newDeployment();
          if (held === 'its build is running') await h.waitForLogs(service, id, 'build started');
          let newer = '';
          const reads = await raceReaders(service, id, async () => {
            newer = await supersede(service);
          });
          const { ended, withoutReason } = endedReads(reads, 'CANCELLED', `superseded by ${newer}`);
          expect(ended).toBeGreaterThanOrEqual(API_READERS + REPOSITORY_READERS);
          expect(withoutReason).toEqual([]);
          await cancel(service, newer);
        }
      };
      if (held === 'nobody holds it') await run();
      else await h.withWorker(BUILD, run);
    },
    60_000,
  );

  it.each(['nobody holds it', 'its build is running'] as const)(
    'when cancelled by its owner while %s',
    async (held) => {
      const run = async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const { service, id } = await h.newDeployment();
          if (held === 'its build is running') await h.waitForLogs(service, id, 'build started');
          const reads = await raceReaders(service, id, () => cancel(service, id));
          const { ended, withoutReason } = endedReads(reads, 'CANCELLED', 'cancelled by its owner');
          expect(ended).toBeGreaterThanOrEqual(API_READERS + REPOSITORY_READERS);
          expect(withoutReason).toEqual([]);
        }
      };
      if (held === 'nobody holds it') await run();
      else await h.withWorker(BUILD, run);
    },
    60_000,
  );

  it('when its build fails', async () => {
    await h.withWorker(BUILD, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { service, id } = await h.newDeployment({ commitMessage: 'fail' });
        await h.waitForLogs(service, id, 'build started');
        const reads = await raceReaders(service, id, async () => undefined);
        const { ended, withoutReason } = endedReads(
          reads,
          'FAILED',
          'The build step failed with exit code 3.',
        );
        expect(ended).toBeGreaterThanOrEqual(API_READERS + REPOSITORY_READERS);
        expect(withoutReason).toEqual([]);
      }
    });
  }, 60_000);
});

describe('a cancel that loses its race', () => {
  /** A deployment as a canceller read it, BUILDING, then moved on by the pipeline to `statuses`. */
  async function movedOnAfterRead(...statuses: DeploymentStatus[]) {
    const { service, id } = await h.newDeployment();
    const read = (await h.repository.find(service, id))!;
    let current = read;
    for (const status of statuses) current = (await h.repository.changeStatus(current, status))!;
    return { service, id, read };
  }

  it('says in the log that it did not apply when the deployment ended first', async () => {
    const { service, id, read } = await movedOnAfterRead('DEPLOYING', 'DEPLOYED');

    const outcome = await h.repository.cancelByOwner(read);

    expect(outcome).toMatchObject({ cancelled: null, now: { id, status: 'DEPLOYED' } });
    expect((await h.api.get(service, id)).body).toMatchObject({
      status: 'DEPLOYED',
      logs: 'Deployment cancelled by its owner.\nThe cancel did not apply: the deployment was DEPLOYED by then.\n',
    });
  });

  it('follows a step the pipeline took first, and cancels from there with one line', async () => {
    const { service, id, read } = await movedOnAfterRead('DEPLOYING');

    const outcome = await h.repository.cancelByOwner(read);

    expect(outcome.cancelled).toMatchObject({ id, status: 'CANCELLED' });
    expect((await h.api.get(service, id)).body.logs).toBe('Deployment cancelled by its owner.\n');
    expect(await h.changes(id)).toEqual([
      '->BUILDING',
      'BUILDING>DEPLOYING',
      'DEPLOYING>CANCELLED',
    ]);
  });

  it('leaves no log behind for a deployment deleted before its line was written', async () => {
    const { service, id, read } = await movedOnAfterRead();
    await h.repository.deleteByService(service.accountId, service.projectId, service.serviceId);

    const outcome = await h.repository.cancelByOwner(read);

    expect(outcome).toEqual({ cancelled: null, now: null });
    expect(await h.models.logs.exists({ _id: id })).toBeNull();
    expect(await h.models.logChunks.countDocuments({ deploymentId: id })).toBe(0);
  });

  it('leaves no log behind for a deployment deleted between its line and its status', async () => {
    const { service, id, read } = await movedOnAfterRead();
    // The log as a claim makes it; then the cascade's first step: the deployment goes, its log
    // not yet.
    await h.repository.logs.create({ ...service, deploymentId: id });
    await h.models.deployments.deleteOne({ _id: id });

    const outcome = await h.repository.cancelByOwner(read);

    expect(outcome).toEqual({ cancelled: null, now: null });
    expect(await h.models.logs.exists({ _id: id })).toBeNull();
    expect(await h.models.logChunks.countDocuments({ deploymentId: id })).toBe(0);
  });
});
