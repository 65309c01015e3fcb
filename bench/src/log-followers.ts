/**
 * Log followers: BENCH_FOLLOWERS (default 200) clients follow one deployment's log through the
 * gateway (`GET …/deployments/:id/logs`, Server-Sent Events) while its build prints BENCH_LINES
 * (default 1,000) lines, each stamped with the time it was printed (`line <n> <Date.now()>`, every
 * 2 ms). For every line at every follower: the time from its print to its arrival. Beside it,
 * the CPU the gateway and the deployments service used while the lines flowed, and their memory
 * (RSS) with every follower connected against before, each divided by the followers.
 *
 * Twice, side by side in one run, with two deployments replicas (log-followers-replica.ts): the
 * followers on the replica running the build (through the stack's gateway), then, for a second
 * deployment, on the other replica (through a gateway of its own), which hears of each append
 * through the log notices on Kafka.
 */
import { readFileSync } from 'node:fs';
import {
  createAppRepository,
  FIXTURE_APP,
  openEventStream,
  type StreamEvent,
} from '@platform/shared/testing';
import { clientWithService } from './lib/client';
import { cpuMeter } from './lib/cpu';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack, type Stack } from './lib/stack';
import { distribution } from './lib/stats';
import { resetStack } from './lib/stores';
import { startOtherReplica } from './log-followers-replica';

const FOLLOWERS = intEnv('BENCH_FOLLOWERS', 200);
const LINES = intEnv('BENCH_LINES', 1_000);

/** Resident memory of a process in MiB (Linux). */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** One deployment followed by FOLLOWERS clients through `gateway`; `pids` are measured. */
async function followOne(
  label: string,
  owner: Awaited<ReturnType<typeof clientWithService>>,
  gateway: string,
  pids: Record<string, number>,
  commitHash: string,
) {
  const servicePath = `/api/projects/${owner.project.id}/services/${owner.service.id}`;
  const created = await owner.client.expect(201, 'POST', `${servicePath}/deployments`, {
    commitHash,
  });
  const logsUrl = `${gateway}${servicePath}/deployments/${created.id}/logs`;
  const rss = () => Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, rssMiB(pid)]));
  const rssBefore = rss();

  say(`${label}: ${FOLLOWERS} followers of deployment ${created.id} through ${gateway}`);
  const latencies: number[] = [];
  const stamp = (event: StreamEvent) => {
    const match = /^line \d+ (\d+)$/.exec(event.data);
    if (match) latencies.push(Date.now() - Number(match[1]));
  };
  const streams = await Promise.all(
    Array.from({ length: FOLLOWERS }, () =>
      openEventStream(logsUrl, { cookie: owner.client.cookieHeader() }, stamp),
    ),
  );
  await sleep(1_000);
  const rssConnected = rss();
  const cpu = cpuMeter(pids);
  const started = Date.now();
  await Promise.all(streams.map((s) => s.ended));
  const wallMs = Date.now() - started;
  const used = cpu.stop();

  const complete = streams.filter(
    (s) => s.events.filter((e) => /^line \d+ \d+$/.test(e.data)).length === LINES,
  ).length;
  const latency = distribution(latencies);
  const perFollower = (value: number) => Number((value / FOLLOWERS).toFixed(3));
  say(
    `${label}: p50 ${ms(latency.p50)} ms, p99 ${ms(latency.p99)} ms, max ${ms(latency.max)} ms over ${latencies.length} line deliveries; ${complete}/${FOLLOWERS} followers got every line`,
  );
  return {
    deliveryMs: latency,
    followersWithEveryLine: complete,
    wallMs,
    cpuMs: used,
    cpuMsPerFollower: Object.fromEntries(
      Object.keys(pids).map((n) => [n, perFollower(used[n] ?? 0)]),
    ),
    rssMiB: { before: rssBefore, connected: rssConnected },
    rssKiBPerFollower: Object.fromEntries(
      Object.keys(pids).map((n) => [
        n,
        Number((((rssConnected[n]! - rssBefore[n]!) * 1024) / FOLLOWERS).toFixed(1)),
      ]),
    ),
  };
}

main('log-followers', 900, async () => {
  const repository = await createAppRepository();
  const stack: Stack = await startStack({
    reset: resetStack,
    env: { SOURCE_ALLOW_LOCAL: 'true', RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const other = await startOtherReplica(stack);
  try {
    const commit = await repository.commit();
    const owner = await clientWithService(stack.gateway, 'log-followers', 'web');
    const servicePath = `/api/projects/${owner.project.id}/services/${owner.service.id}`;
    // Waits 3 s (the followers connect meanwhile), then prints the stamped lines.
    const printer = `setTimeout(() => { let i = 0; const t = setInterval(() => { console.log('line ' + ++i + ' ' + Date.now()); if (i === ${LINES}) clearInterval(t); }, 2); }, 3000)`;
    await owner.client.expect(200, 'PATCH', servicePath, {
      repository: repository.url,
      ...FIXTURE_APP,
      buildCommand: `node -e "${printer}" && ${FIXTURE_APP.buildCommand}`,
    });
    const { gateway, deployments } = stack.pids;
    const sameReplica = await followOne(
      'on the replica running the build',
      owner,
      stack.gateway,
      { gateway: gateway!, deployments: deployments! },
      commit.hash,
    );
    const otherReplica = await followOne(
      'on the other replica',
      owner,
      other.gateway,
      {
        gateway: other.pids.gateway,
        deployments: other.pids.deployments,
        buildingDeployments: deployments!,
      },
      commit.hash,
    );
    writeResults('log-followers', {
      config: { followers: FOLLOWERS, lines: LINES, lineEveryMs: 2, deploymentsReplicas: 2 },
      sameReplica,
      otherReplica,
      verdicts: [
        verdict(
          'followers that got every line (same replica)',
          sameReplica.followersWithEveryLine,
          '>=',
          FOLLOWERS,
        ),
        verdict(
          'followers that got every line (other replica)',
          otherReplica.followersWithEveryLine,
          '>=',
          FOLLOWERS,
        ),
        verdict('delivery p99, same replica', ms(sameReplica.deliveryMs.p99), '<=', 50, ' ms'),
        verdict('delivery p99, other replica', ms(otherReplica.deliveryMs.p99), '<=', 100, ' ms'),
      ],
    });
  } finally {
    await other.stop();
    await repository.close();
  }
});
