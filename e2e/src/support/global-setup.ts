import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { connectMongo, unmountUnder } from '@platform/shared';
import { testInfraUrls, testLogger, waitForOutput } from '@platform/shared/testing';
import sharedGlobalSetup from '../../../libs/shared/src/testing/global-setup';

declare global {
  var __E2E_STACK__: ChildProcess | undefined;
}

const REPO_ROOT = path.resolve(__dirname, '../../..');
const START_TIMEOUT_MS = 240_000;

import { E2E_PORTS, newStackSecrets } from './stack';

/**
 * The stack's databases and builds from an earlier run are dropped first: each run starts from
 * nothing (otherwise the deployments service would start every app an earlier run left live, as
 * it does after a restart, and each run would start more).
 */
async function resetStack(): Promise<void> {
  const connection = await connectMongo({
    url: testInfraUrls().mongoUrl,
    dbName: 'e2e_deployments',
    logger: testLogger(),
  });
  try {
    for (const service of ['auth', 'projects', 'deployments', 'webhooks']) {
      await connection.useDb(`e2e_${service}`).dropDatabase();
    }
  } finally {
    await connection.close();
  }
  const cache = process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache');
  const builds = path.join(cache, 'platform-dev/run/e2e-builds');
  // Each build's disk is mounted there: deleting through a mount would empty it and fail.
  await unmountUnder(builds);
  rmSync(builds, { recursive: true, force: true });
}

export default async function globalSetup(): Promise<void> {
  if (process.env.E2E_BASE_URL) return;
  await sharedGlobalSetup();
  await resetStack();
  const secrets = newStackSecrets();
  Object.assign(process.env, secrets);
  const stack = spawn('bash', [path.join(REPO_ROOT, 'scripts/start.sh')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...E2E_PORTS,
      STACK_NAME: 'e2e',
      INTERNAL_SECRET: secrets.E2E_INTERNAL_SECRET,
      SESSION_SECRET: secrets.E2E_SESSION_SECRET,
      ENCRYPTION_KEY: secrets.E2E_ENCRYPTION_KEY,
      NODE_ENV: 'development',
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
      HEALTH_CHECK_TIMEOUT: '10s',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '200ms,400ms,800ms',
      RATE_LIMIT_PER_MINUTE: '100000',
      LOGIN_RATE_LIMIT_PER_MINUTE: '100000',
      // The burst fault test triggers hundreds of deployments a minute as one account.
      DEPLOY_RATE_LIMIT: '100000',
      WEBHOOK_TEST_RATE_LIMIT: '100000',
      REDELIVER_RATE_LIMIT: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  globalThis.__E2E_STACK__ = stack;
  await waitForOutput(stack, 'Platform ready at', {
    timeoutMs: START_TIMEOUT_MS,
    what: 'the e2e stack',
  });
  process.env.E2E_BASE_URL = `http://127.0.0.1:${E2E_PORTS.GATEWAY_PORT}`;
  process.env.E2E_LOCAL_STACK = '1';
  process.stderr.write(`e2e stack ready at ${process.env.E2E_BASE_URL}\n`);
}
