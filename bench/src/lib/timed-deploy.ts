import type { AppCommit, GatewayClient } from '@platform/shared/testing';
import { answering } from './app';
import { waitForServiceUrl } from './client';

/**
 * One deployment through the platform, timed from the trigger to the service's URL (through the
 * gateway) answering with `commit`; then checked DEPLOYED (the URL answers as soon as it is
 * switched, DEPLOYED is recorded right after). Resolves with the time in ms and the deployment's id.
 */
export async function timedDeploy(
  client: GatewayClient,
  servicePath: string,
  commit: AppCommit,
  options: { pollMs: number; deadlineMs: number },
): Promise<{ elapsed: number; id: string }> {
  const started = performance.now();
  const created = await client.expect(201, 'POST', `${servicePath}/deployments`, {
    commitHash: commit.hash,
  });
  const url = await waitForServiceUrl(client, servicePath, options.pollMs);
  await answering(url, commit.revision, Date.now() + options.deadlineMs);
  const elapsed = performance.now() - started;
  const deployment = await client.expect(
    200,
    'GET',
    `${servicePath}/deployments/${created.id}?wait=30`,
  );
  if (deployment.status !== 'DEPLOYED') {
    throw new Error(`deployment ${created.id} is ${deployment.status}:\n${deployment.logs}`);
  }
  return { elapsed, id: created.id as string };
}
