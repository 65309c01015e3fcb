/**
 * Build output: one build prints BENCH_OUTPUT_BYTES (default 1 GB) without a newline
 * (`head -c N /dev/zero | tr '\0' a`), then builds and starts the fixture app. The deployments
 * service's resident memory (VmRSS) is sampled every 100 ms from before the trigger until the
 * deployment is final: its peak growth is what a tenant's output costs the service. Beside it,
 * the time the build took and the line the log kept of the print (cut, with its length).
 */
import { readFileSync } from 'node:fs';
import { createAppRepository, FIXTURE_APP } from '@platform/shared/testing';
import { clientWithService } from './lib/client';
import { intEnv } from './lib/env';
import { ms, say, sleep } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { main, startStack } from './lib/stack';
import { resetStack } from './lib/stores';

const OUTPUT_BYTES = intEnv('BENCH_OUTPUT_BYTES', 1_000_000_000);
const SAMPLE_MS = 100;
const MiB = 1024 * 1024;

/** Resident memory of a process in MiB (Linux). */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** One deployment of the service with `buildCommand`, the deployments service's RSS sampled. */
async function measuredDeploy(
  owner: Awaited<ReturnType<typeof clientWithService>>,
  servicePath: string,
  commitHash: string,
  pid: number,
  buildCommand: string,
) {
  await owner.client.expect(200, 'PATCH', servicePath, { buildCommand });
  await sleep(2_000);
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), SAMPLE_MS);
  const started = Date.now();
  const created = await owner.client.expect(201, 'POST', `${servicePath}/deployments`, {
    commitHash,
  });
  let deployment: { status: string; logs: string };
  for (;;) {
    deployment = await owner.client.expect(
      200,
      'GET',
      `${servicePath}/deployments/${created.id}?wait=60`,
    );
    if (['DEPLOYED', 'FAILED', 'CANCELLED'].includes(deployment.status)) break;
  }
  const wallMs = Date.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB(pid));
  const after = rssMiB(pid);
  say(
    `${deployment.status} in ${ms(wallMs / 1000, 1)} s; deployments RSS ${ms(before, 1)} → peak ${ms(peak, 1)} MiB (+${ms(peak - before, 1)}), ${ms(after, 1)} after`,
  );
  return {
    deployment,
    wallMs,
    growthMiB: ms(peak - before, 1),
    rssMiB: { before: ms(before, 1), peak: ms(peak, 1), after: ms(after, 1) },
  };
}

main('build-output', 900, async () => {
  const repository = await createAppRepository();
  const stack = await startStack({ reset: resetStack, env: { SOURCE_ALLOW_LOCAL: 'true' } });
  try {
    const commit = await repository.commit();
    const owner = await clientWithService(stack.gateway, 'build-output', 'web');
    const servicePath = `/api/projects/${owner.project.id}/services/${owner.service.id}`;
    await owner.client.expect(200, 'PATCH', servicePath, {
      repository: repository.url,
      ...FIXTURE_APP,
    });
    const pid = stack.pids.deployments!;

    say('a build printing nothing much (the baseline; it warms the service up too)');
    const quiet = await measuredDeploy(
      owner,
      servicePath,
      commit.hash,
      pid,
      FIXTURE_APP.buildCommand,
    );
    say(`a build printing ${OUTPUT_BYTES} bytes without a newline`);
    const loud = await measuredDeploy(
      owner,
      servicePath,
      commit.hash,
      pid,
      `head -c ${OUTPUT_BYTES} /dev/zero | tr '\\0' a; echo; ${FIXTURE_APP.buildCommand}`,
    );

    const cutLine = loud.deployment.logs.split('\n').find((line) => line.startsWith('aaaa')) ?? '';
    writeResults('build-output', {
      config: { outputBytes: OUTPUT_BYTES, sampleEveryMs: SAMPLE_MS },
      quietBuild: {
        status: quiet.deployment.status,
        wallMs: quiet.wallMs,
        deploymentsRssMiB: quiet.rssMiB,
      },
      printingBuild: {
        status: loud.deployment.status,
        wallMs: loud.wallMs,
        printRateMiBps: ms(OUTPUT_BYTES / MiB / (loud.wallMs / 1000), 1),
        deploymentsRssMiB: loud.rssMiB,
        keptOfThePrint: { bytes: Buffer.byteLength(cutLine), ends: cutLine.slice(-60) },
        logBytes: Buffer.byteLength(loud.deployment.logs),
      },
      verdicts: [
        verdict('the deployment', loud.deployment.status === 'DEPLOYED' ? 1 : 0, '>=', 1),
        verdict(
          `deployments RSS growth while ${OUTPUT_BYTES} bytes are printed`,
          loud.growthMiB,
          '<=',
          64,
          ' MiB',
        ),
      ],
    });
  } finally {
    await repository.close();
  }
});
