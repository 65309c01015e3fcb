/**
 * Where the gateway's time goes (benchmark 1's cause analysis): a second gateway process, the
 * same build and configuration as the stack's, run with `node --cpu-prof` on port 28081 beside
 * the stack, loaded with benchmark 1's request (50 connections, 20 s), then stopped so it writes
 * its profile. The summary (self and inclusive time by function and by package) goes to
 * results/gateway-profile.json; the raw .cpuprofile stays in the temporary directory printed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatewayClient } from '@platform/shared/testing';
import { uniqueEmail } from './lib/client';
import { REPO_ROOT, intEnv } from './lib/env';
import { load } from './lib/load';
import { say, waitFor } from './lib/log';
import { summarizeProfile } from './lib/profile';
import { writeResults } from './lib/results';
import { gatewayProcessEnv, main, startStack } from './lib/stack';
import { resetStack } from './lib/stores';

const PORT = 28081;
const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const DURATION_S = intEnv('BENCH_DURATION_S', 20);

main('profile-gateway', 900, async () => {
  const stack = await startStack({ reset: resetStack });
  const client = new GatewayClient(stack.gateway);
  await client.signIn(uniqueEmail('profile'));
  const project = await client.expect(201, 'POST', '/api/projects', { name: 'profiled' });
  const path_ = `/api/projects/${project.id}`;

  const profileDir = mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-profile-'));
  // What start.sh gives the stack's gateway, on another port.
  const env = gatewayProcessEnv(stack, PORT);
  say(`starting a profiled gateway on :${PORT} (profile in ${profileDir})`);
  const gateway = spawn(
    process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
      path.join(REPO_ROOT, 'services/gateway/dist/main.js'),
    ],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => gateway.once('exit', () => resolve()));
  try {
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${PORT}/readyz`).catch(() => null))?.ok,
      { timeoutMs: 30_000, what: 'the profiled gateway' },
    );
    const { result } = await load({
      label: 'profiled gateway',
      url: `http://127.0.0.1:${PORT}${path_}`,
      headers: { cookie: client.cookieHeader() },
      connections: CONNECTIONS,
      durationS: DURATION_S,
    });
    gateway.kill('SIGTERM');
    await exited;
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the gateway wrote no profile');
    const summary = summarizeProfile(path.join(profileDir, file));
    say(`profile: ${summary.busyMs} ms busy over ${result.requests} requests`);
    for (const p of summary.byPackage.slice(0, 12)) say(`  ${p.percentOfBusy}% ${p.name}`);
    writeResults('gateway-profile', {
      request: `GET ${'/api/projects/:projectId'} through a profiled gateway`,
      load: result,
      profileFile: path.join(profileDir, file),
      busyMsPerRequest: Number((summary.busyMs / result.requests).toFixed(3)),
      profile: summary,
    });
  } finally {
    if (gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGKILL');
      await exited;
    }
  }
});
