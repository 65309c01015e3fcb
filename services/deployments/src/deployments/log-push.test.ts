import {
  identityHeaders,
  openEventStream,
  waitFor,
  type StreamEvent,
} from '@platform/shared/testing';
import { startHarness, useHarness, type Harness, type ServiceEnv } from '../test/harness';
import type { OwnedService } from '../test/projects-stub';

// Live logs are pushed, not polled: a line a build prints reaches its followers, in this replica
// and in another one (two composed services on one database, as two replicas are), through the
// writer writing as output comes and a notice on Kafka waking every replica's tail. Every timer
// that could deliver it instead is far away: the lease's heartbeat (which used to write the
// output; its longest setting), the followers' fallback poll (which used to be the only way to
// read it), and the end of the build (whose status change writes and announces everything).
const TIMERS_FAR_AWAY: ServiceEnv = {
  PIPELINE_HEARTBEAT: '10s',
  PIPELINE_LEASE: '1m',
  LOG_FOLLOW_POLL: '10m',
};
// Far below those timers; wide, for a loaded machine.
const DEADLINE_MS = 3_000;
const STAMPED = 4;
// Each line stamped with the time it was printed (ms), a moment apart; the build goes on 6 s.
const BUILD = `sleep 0.5; for i in $(seq 1 ${STAMPED}); do echo "stamped $i $(date +%s%3N)"; sleep 0.4; done; sleep 6`;

const writer = useHarness({
  relay: true,
  pipeline: { TEST_BUILD: BUILD, TEST_DEPLOY: 'echo deployed', ...TIMERS_FAR_AWAY },
});
let other: Harness;
beforeAll(async () => {
  // Another replica on the same database and the same projects service, running no pipeline.
  other = await startHarness({
    relay: true,
    pipeline: {
      PIPELINE_ENABLED: 'false',
      MONGO_DB: writer.config.MONGO_DB,
      PROJECTS_URL: writer.projects.url,
      ...TIMERS_FAR_AWAY,
    },
  });
});
afterAll(() => other?.close());

/** Follows the deployment's log on `replica`, each event stamped with its arrival. */
async function follow(
  replica: Harness,
  service: OwnedService,
  id: string,
  headers: Record<string, string> = {},
) {
  const url = replica.api.path(service, `/${id}/logs`);
  const identity = { accountId: service.accountId, audience: 'deployments' } as const;
  const arrivals: { event: StreamEvent; at: number }[] = [];
  const stream = await openEventStream(
    url,
    { ...identityHeaders(identity, 'GET', url), ...headers },
    (event) => arrivals.push({ event, at: Date.now() }),
  );
  return { stream, arrivals };
}

/** Each stamped line's time from its print to its arrival, in order of the lines. */
function delays(arrivals: { event: StreamEvent; at: number }[]) {
  return arrivals.flatMap(({ event, at }) => {
    const match = /^stamped (\d+) (\d+)$/.exec(event.data);
    return match ? [{ line: Number(match[1]), ms: at - Number(match[2]) }] : [];
  });
}

describe('live logs, pushed', () => {
  it.each([
    ['on the replica running the build', () => writer],
    ['on another replica', () => other],
  ])(
    'reach a follower %s within seconds of their print, every timer minutes away, then the final status',
    async (_where, replica) => {
      const { service, id } = await writer.newDeployment();

      const { stream, arrivals } = await follow(replica(), service, id);
      await waitFor(() => delays(arrivals).length === STAMPED, {
        timeoutMs: 30_000,
        what: `${STAMPED} stamped lines`,
      });

      const got = delays(arrivals);
      expect(got.map((d) => d.line)).toEqual([1, 2, 3, 4]);
      for (const { ms } of got) expect(ms).toBeLessThan(DEADLINE_MS);
      // The status events come by Kafka too: the stream ends with the final status.
      await stream.ended;
      expect(stream.events.at(-1)).toEqual({ event: 'status', data: '{"status":"DEPLOYED"}' });
    },
    60_000,
  );

  it('lets a follower of one replica resume on the other with Last-Event-ID, missing nothing and repeating nothing', async () => {
    const { service, id } = await writer.newDeployment();
    const first = await follow(writer, service, id);
    await waitFor(() => delays(first.arrivals).length >= 1, {
      timeoutMs: 30_000,
      what: 'a stamped line',
    });
    first.stream.close();
    await first.stream.ended;
    const seen = first.stream.events.filter((e) => e.event === 'log');
    const last = seen.at(-1)!.id!;

    const again = await follow(other, service, id, { 'last-event-id': last });
    await again.stream.ended;

    const rest = again.stream.events.filter((e) => e.event === 'log');
    const ids = [...seen, ...rest].map((e) => Number(e.id));
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    const lines = [...seen, ...rest].map((e) => /^stamped (\d+)/.exec(e.data)?.[1]).filter(Boolean);
    expect(lines).toEqual(['1', '2', '3', '4']);
    expect(again.stream.events.at(-1)).toEqual({
      event: 'status',
      data: '{"status":"DEPLOYED"}',
    });
  }, 60_000);
});
