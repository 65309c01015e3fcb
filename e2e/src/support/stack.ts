import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { unmountUnder } from '@platform/shared';
import { testInfraUrls, uniqueName, waitFor } from '@platform/shared/testing';

/** Ports of the stack the suite starts, away from a developer's own `npm start`. */
export const E2E_PORTS = {
  GATEWAY_PORT: '18080',
  AUTH_PORT: '14001',
  PROJECTS_PORT: '14002',
  DEPLOYMENTS_PORT: '14003',
  WEBHOOKS_PORT: '14004',
  DEV_IDP_PORT: '14010',
  RUNTIME_ROUTER_PORT: '14020',
};

/**
 * The secrets of the stack the suite starts: test-only values made at random for each run by the
 * global setup, which gives them to scripts/start.sh and, through the environment, to the test
 * files (nothing secret is written in the repository).
 */
export function newStackSecrets(): Record<
  'E2E_INTERNAL_SECRET' | 'E2E_SESSION_SECRET' | 'E2E_ENCRYPTION_KEY',
  string
> {
  return {
    E2E_INTERNAL_SECRET: randomBytes(32).toString('hex'),
    E2E_SESSION_SECRET: randomBytes(32).toString('hex'),
    // <keyId>:<base64 of 32 bytes>: projects seals secret variables and webhooks signing secrets.
    E2E_ENCRYPTION_KEY: `e2e-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`,
  };
}

/** One of the run's stack secrets (newStackSecrets), as the global setup made it. */
export function stackSecret(name: 'E2E_INTERNAL_SECRET' | 'E2E_ENCRYPTION_KEY'): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: the e2e global setup makes it with the stack`);
  return value;
}
export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const INFRA = path.join(REPO_ROOT, 'scripts/infra/infra.sh');

/** Fault tests control servers and processes: they need the stack the suite started itself. */
export function requireLocalStack(): void {
  if (process.env.E2E_LOCAL_STACK !== '1') {
    throw new Error('fault tests need the local stack the e2e setup starts (unset E2E_BASE_URL)');
  }
}

/**
 * The service's own Kafka login (as scripts/start.sh gives it): its user, with the password the
 * run was given in KAFKA_SASL_PASSWORD_<SERVICE>; none if the broker has no SASL.
 */
function serviceKafkaLogin(service: string): Record<string, string> {
  const password = process.env[`KAFKA_SASL_PASSWORD_${service.toUpperCase()}`];
  if (!password) return {};
  return {
    KAFKA_SASL_USERNAME: service,
    KAFKA_SASL_PASSWORD: password,
    ...(process.env.KAFKA_SASL_MECHANISM
      ? { KAFKA_SASL_MECHANISM: process.env.KAFKA_SASL_MECHANISM }
      : {}),
  };
}

export interface ServiceProcess {
  url: string;
  process: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs one more instance of a service as its own OS process (from its build), beside the
 * stack, so a test can SIGKILL and restart it. `env` adds to a working default environment.
 */
export async function startServiceProcess(
  service: 'deployments' | 'webhooks',
  port: number,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const infra = testInfraUrls();
  let output = '';
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, `services/${service}/dist/main.js`)],
    {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        PORT: String(port),
        MONGO_URL: infra.mongoUrl,
        KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        INTERNAL_SECRET: stackSecret('E2E_INTERNAL_SECRET'),
        ENCRYPTION_KEY: stackSecret('E2E_ENCRYPTION_KEY'),
        PROJECTS_URL: `http://127.0.0.1:${E2E_PORTS.PROJECTS_PORT}`,
        DEPLOYMENTS_URL: `http://127.0.0.1:${E2E_PORTS.DEPLOYMENTS_PORT}`,
        // A new group that starts at the end: replaying every event the topics still hold
        // (all earlier runs') would take longer than the test. Named after the service: its
        // Kafka user may only use groups starting with its name.
        KAFKA_GROUP_ID: uniqueName(`${service}-e2e-fault`),
        KAFKA_FROM_BEGINNING: 'false',
        ...serviceKafkaLogin(service),
        // The sandbox's egress rules are the host's: the same allowed ranges as every other
        // process, or this one would take them away from everyone's sandboxes.
        ...(process.env.SANDBOX_EGRESS_ALLOW && {
          SANDBOX_EGRESS_ALLOW: process.env.SANDBOX_EGRESS_ALLOW,
        }),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${service} exited: ${output}`);
      return (await fetch(`${url}/readyz`).catch(() => null))?.ok;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${service} on ${port} to be ready` },
  );
  return {
    url,
    process: child,
    output: () => output,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}

/**
 * One more instance of a service that a test SIGKILLs (`crash`) and starts again (`restart`), on
 * a database and a consumer group of its own that it keeps across the restart, as a real restart
 * does. `stop` ends whichever instance runs.
 */
export async function startKillableService(
  service: 'deployments' | 'webhooks',
  port: number,
  env: Record<string, string>,
) {
  const fullEnv = {
    MONGO_DB: uniqueName(`fault_${service}`),
    KAFKA_GROUP_ID: uniqueName(`${service}-fault`),
    ...env,
  };
  let running: ServiceProcess | undefined = await startServiceProcess(service, port, fullEnv);
  return {
    url: running.url,
    crash: async () => {
      await running?.kill('SIGKILL');
      running = undefined;
    },
    restart: async () => {
      running = await startServiceProcess(service, port, fullEnv);
    },
    stop: async () => running?.kill('SIGTERM'),
  };
}

/**
 * Settings of a deployments instance with a local runtime of its own (its supervisor in a new
 * RUNTIME_DIR, its router on `routerPort`, its builds beside it): stop it with stopRuntime.
 */
export function ownRuntime(routerPort: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'e2e-runtime-'));
  return {
    env: {
      RUNTIME_DIR: path.join(dir, 'runtime'),
      RUNTIME_ROUTER_PORT: String(routerPort),
      BUILDS_DIR: path.join(dir, 'builds'),
      SOURCE_ALLOW_LOCAL: 'true',
    },
    /** Stops the supervisor (and its apps) with SIGTERM, and removes the directory. */
    async stop() {
      const pid = await new Promise<number | null>((resolve) => {
        const req = request(
          { socketPath: path.join(dir, 'runtime/supervisor.sock'), path: '/healthz' },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve((JSON.parse(body) as { pid: number }).pid));
          },
        );
        req.on('error', () => resolve(null));
        req.end();
      });
      if (pid) {
        process.kill(pid, 'SIGTERM');
        await waitFor(
          () => {
            try {
              process.kill(pid, 0);
              return false;
            } catch {
              return true;
            }
          },
          { timeoutMs: 20_000, what: `supervisor ${pid} to exit` },
        );
      }
      await unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
