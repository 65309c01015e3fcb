/**
 * A second deployments replica beside the stack's (log-followers.ts), on the same database and
 * Kafka, running no pipeline: builds run on the stack's own replica, so a follower here is one on
 * "the other replica", which hears of each append through the log notices on Kafka. With it, a
 * second gateway whose DEPLOYMENTS_URL is that replica, so that followers reach it through a
 * gateway as clients do (sessions are in the shared Redis: the same cookie works on both).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { waitFor } from '@platform/shared/testing';
import { BENCH_PORTS, REPO_ROOT } from './lib/env';
import { say } from './lib/log';
import { gatewayProcessEnv, type Stack } from './lib/stack';

const REPLICA_PORT = 24005;
const GATEWAY_PORT = 28082;

export interface OtherReplica {
  gateway: string;
  pids: { gateway: number; deployments: number };
  stop(): Promise<void>;
}

const local = (port: number | string) => `http://127.0.0.1:${port}`;

function startProcess(name: string, script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, script)], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') say(`${name} exited (${code ?? signal})`);
  });
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export async function startOtherReplica(stack: Stack): Promise<OtherReplica> {
  const { env } = stack;
  // As start.sh starts the stack's replica (its `run deployments` line), without the pipeline.
  const deployments = startProcess(
    'the second deployments replica',
    'services/deployments/dist/main.js',
    {
      ...env,
      PORT: String(REPLICA_PORT),
      MONGO_DB: `${stack.stackName}_deployments`,
      KAFKA_GROUP_ID: `deployments-${stack.stackName}`,
      PROJECTS_URL: local(BENCH_PORTS.PROJECTS_PORT),
      ...(env.KAFKA_SASL_PASSWORD_DEPLOYMENTS && {
        KAFKA_SASL_USERNAME: 'deployments',
        KAFKA_SASL_PASSWORD: env.KAFKA_SASL_PASSWORD_DEPLOYMENTS,
      }),
      PIPELINE_ENABLED: 'false',
    },
  );
  const gateway = startProcess('the second gateway', 'services/gateway/dist/main.js', {
    ...gatewayProcessEnv(stack, GATEWAY_PORT),
    DEPLOYMENTS_URL: local(REPLICA_PORT),
  });
  const stop = async () => {
    await stopProcess(gateway);
    await stopProcess(deployments);
  };
  try {
    for (const port of [REPLICA_PORT, GATEWAY_PORT]) {
      await waitFor(async () => (await fetch(`${local(port)}/readyz`).catch(() => null))?.ok, {
        timeoutMs: 60_000,
        what: `the process on :${port} to be ready`,
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  say(`second deployments replica :${REPLICA_PORT} (no pipeline), its gateway :${GATEWAY_PORT}`);
  return {
    gateway: local(GATEWAY_PORT),
    pids: { gateway: gateway.pid!, deployments: deployments.pid! },
    stop,
  };
}
