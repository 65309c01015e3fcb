/**
 * Round trips: how many database commands each request of the deployments API makes, and how
 * many of them run one after another (the round trips a request waits for).
 *
 * The deployments app is built in this process as services/deployments/src/compose.ts builds it
 * (the repositories, DeploymentsService, createApp), on a Mongoose connection opened
 * with the driver's command monitoring (`monitorCommands: true`): every command the driver sends
 * emits `commandStarted`, then `commandSucceeded` or `commandFailed`. Around it: a tiny projects
 * stub answering the ownership check 200, no pipeline worker, no outbox relay
 * (`writeWithoutRelay`: events stay in the deployment's outbox), so nothing else talks to the
 * database while a request runs. Requests are sent one at a time; a request's commands are those
 * started between sending it and having its whole answer (and any started up to 50 ms after
 * are reported apart, as `afterAnswer`).
 *
 * Sequential round trips: the longest chain of commands each started after the previous one
 * had succeeded (commands that overlap in time ran in parallel and count once).
 *
 * Its own scratch database (`bench_round_trips_<random>`, dropped at the end) on the server at
 * BENCH_MONGO_URL or MONGO_URL (default the shared local server, mongodb://127.0.0.1:27017);
 * takes seconds. Writes results/round-trips.json.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  requireOwnership,
  createLogger,
  identityOfRequest,
  syncIndexes,
  writeWithoutRelay,
} from '@platform/shared';
import { identityHeaders } from '@platform/shared/testing';
import { createApp } from '@platform/deployments/dist/app';
import { AccountLimits } from '@platform/deployments/dist/deployments/account-limits';
import { DeploymentsRepository } from '@platform/deployments/dist/deployments/deployments.repository';
import { DeploymentsService } from '@platform/deployments/dist/deployments/deployments.service';
import { StatusWatch } from '@platform/deployments/dist/deployments/status-watch';
import { createModels } from '@platform/deployments/dist/models';
import { BuildStore } from '@platform/deployments/dist/builds/build-store';
import { LogFollowers } from '@platform/deployments/dist/deployments/log-followers';
import { LogStore } from '@platform/deployments/dist/deployments/log-store';
import { SourceSnapshots } from '@platform/deployments/dist/source/snapshot';
import { TriggerRepository } from '@platform/deployments/dist/deployments/trigger.repository';
import { TriggerService } from '@platform/deployments/dist/deployments/trigger.service';
import { NO_SOURCE } from '@platform/deployments/dist/test/projects-stub';
import mongoose from 'mongoose';
import { intEnv } from './lib/env';
import { ms, say } from './lib/log';
import { verdict, writeResults } from './lib/results';
import { seedDeployments } from './lib/seed';
import { main } from './lib/stack';

const MONGO_URL =
  process.env.BENCH_MONGO_URL || process.env.MONGO_URL || 'mongodb://127.0.0.1:27017';
const ROUNDS = intEnv('BENCH_ROUNDS', 5);
const SEEDED = intEnv('BENCH_DEPLOYMENTS', 60);
const PAGE = 20;
const SECRET = `bench-round-trips-${randomBytes(16).toString('hex')}`;
/** Per kind of request: at most this many sequential round trips. */
const TARGETS: Record<string, number> = {
  trigger: 3,
  'trigger, Idempotency-Key, first': 3,
  'trigger, Idempotency-Key, repeat': 3,
};
const OTHERS_TARGET = 2;

const now = () => performance.now();

interface Command {
  name: string;
  collection: string | null;
  start: number;
  end: number | null;
  ok: boolean | null;
  /** Write errors in a successful reply (11000 on a duplicate insert). */
  writeErrors: number[];
}

/** A request's commands, relative to when it was sent. */
interface Measured {
  status: number;
  ms: number;
  commands: number;
  roundTrips: number;
  timeline: {
    command: string;
    startMs: number;
    endMs: number | null;
    ok: boolean | null;
    writeErrors?: number[];
  }[];
  ownershipChecks: { startMs: number; endMs: number }[];
  afterAnswer: string[];
}

/**
 * The longest chain of commands each started after the one before it had ended: the round
 * trips the request had to wait for one after another (overlapping commands count once).
 * Greedy by end time, which finds the largest set of pairwise disjoint intervals.
 */
export function sequentialRoundTrips(commands: { start: number; end: number | null }[]): number {
  const byEnd = commands
    .map((c) => ({ start: c.start, end: c.end ?? Infinity }))
    .sort((a, b) => a.end - b.end);
  let count = 0;
  let lastEnd = -Infinity;
  for (const c of byEnd) {
    if (c.start >= lastEnd) {
      count++;
      lastEnd = c.end;
    }
  }
  return count;
}

/**
 * The projects service's internal service endpoints, the ownership check and the source (a
 * service without settings): 200 for any service of a correctly signed caller.
 */
async function startProjectsStub(calls: { start: number; end: number }[]) {
  const server: Server = createServer((req, res) => {
    const start = now();
    const accountId = identityOfRequest(req, SECRET, 'projects');
    const match = /^\/internal\/projects\/([^/]+)\/services\/([^/]+)(\/source)?$/.exec(
      req.url ?? '',
    );
    const owned = match && { projectId: match[1], serviceId: match[2], accountId };
    const [status, body] =
      req.method === 'GET' && owned && accountId
        ? [200, match[3] ? { ...owned, ...NO_SOURCE } : owned]
        : [404, { error: 'NOT_FOUND', message: 'Service not found.' }];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    calls.push({ start, end: now() });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

main('round-trips', 300, async () => {
  const dbName = `bench_round_trips_${randomBytes(4).toString('hex')}`;
  say(`deployments app in process on ${MONGO_URL}, database ${dbName}`);
  const connection = await mongoose
    .createConnection(MONGO_URL, {
      dbName,
      monitorCommands: true,
      autoIndex: false,
      bufferCommands: false,
      serverSelectionTimeoutMS: 10_000,
    })
    .asPromise();
  const servers: Server[] = [];
  try {
    const models = createModels(connection);
    // Collections and indexes made before measuring (mongoose's autoCreate, then syncIndexes).
    await Promise.all(Object.values(models).map((model) => model.init()));
    await syncIndexes(models);
    const buildInfo = await connection.db!.admin().command({ buildInfo: 1 });
    const server = {
      version: String(buildInfo.version),
      ferretdbVersion: buildInfo.ferretdbVersion ? String(buildInfo.ferretdbVersion) : null,
    };

    // A service with SEEDED finished deployments, so lists have a second page.
    const ref = {
      accountId: randomBytes(12).toString('hex'),
      projectId: randomBytes(12).toString('hex'),
      serviceId: randomBytes(12).toString('hex'),
    };
    await seedDeployments(
      connection,
      { accountId: ref.accountId, projectId: ref.projectId, serviceIds: [ref.serviceId] },
      SEEDED,
      { batch: SEEDED },
    );

    const ownershipCalls: { start: number; end: number }[] = [];
    const projects = await startProjectsStub(ownershipCalls);
    servers.push(projects.server);
    const repository = new DeploymentsRepository(models, writeWithoutRelay);
    const projectsConfig = { PROJECTS_URL: projects.url, INTERNAL_SECRET: SECRET };
    const snapshots = new SourceSnapshots(models.sources);
    const builds = new BuildStore(path.join(tmpdir(), 'bench-round-trips-builds'));
    const service = new DeploymentsService({
      deployments: repository,
      statusWatch: new StatusWatch(),
      snapshots,
      builds,
      limits: new AccountLimits(models, { maxBuilds: 2, maxApps: 10 }),
      followers: new LogFollowers({
        logs: new LogStore(models),
        statusOf: async () => null,
        pollMs: 300,
        logger: createLogger('deployments', 'warn'),
        stopping: new AbortController().signal,
      }),
    });
    const triggers = new TriggerService({
      triggers: new TriggerRepository(models, writeWithoutRelay, repository.logs, projectsConfig),
      deployments: repository,
      snapshots,
      builds,
      onDeploymentCreated: () => undefined,
    });
    const app = createServer(
      createApp({
        logger: createLogger('deployments', 'warn'),
        internalSecret: SECRET,
        connection,
        logStreamHeartbeatMs: 15_000,
        requireService: requireOwnership(projectsConfig, 'service'),
        service,
        triggers,
      }),
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    servers.push(app);
    const base =
      `http://127.0.0.1:${(app.address() as AddressInfo).port}` +
      `/api/projects/${ref.projectId}/services/${ref.serviceId}/deployments`;

    // Every command the driver sends, in order.
    const commands: Command[] = [];
    const inFlight = new Map<string, Command>();
    const keyOf = (event: { connectionId?: unknown; requestId: number }) =>
      `${String(event.connectionId)}:${event.requestId}`;
    const client = connection.getClient();
    client.on('commandStarted', (event) => {
      const target = event.command[event.commandName];
      const command: Command = {
        name: event.commandName,
        collection: typeof target === 'string' ? target : (event.command.collection ?? null),
        start: now(),
        end: null,
        ok: null,
        writeErrors: [],
      };
      inFlight.set(keyOf(event), command);
      commands.push(command);
    });
    /** Marks the command of `event` done, `ok` or not, and returns it. */
    const finish = (event: Parameters<typeof keyOf>[0], ok: boolean) => {
      const command = inFlight.get(keyOf(event));
      if (!command) return undefined;
      inFlight.delete(keyOf(event));
      command.end = now();
      command.ok = ok;
      return command;
    };
    client.on('commandSucceeded', (event) => {
      const command = finish(event, true);
      if (!command) return;
      const errors = (event.reply as { writeErrors?: { code: number }[] }).writeErrors ?? [];
      command.writeErrors = errors.map((e) => e.code);
    });
    client.on('commandFailed', (event) => finish(event, false));

    const identity = { accountId: ref.accountId, audience: 'deployments', secret: SECRET } as const;
    const send = async (
      method: 'GET' | 'POST',
      path: string,
      expected: number,
      options: { body?: unknown; headers?: Record<string, string> } = {},
    ): Promise<{ body: any; measured: Measured }> => {
      const from = commands.length;
      const checksFrom = ownershipCalls.length;
      // Signed for this request (an identity names its method and path), before the clock starts.
      const signed = identityHeaders(identity, method, `${base}${path}`);
      const sent = now();
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...signed,
          ...(options.body !== undefined && { 'content-type': 'application/json' }),
          ...options.headers,
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      const answered = now();
      const body = text ? JSON.parse(text) : null;
      if (response.status !== expected) {
        throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
      }
      await delay(50);
      const own = commands.slice(from).filter((c) => c.start <= answered);
      const late = commands.slice(from).filter((c) => c.start > answered);
      const label = (c: Command) => `${c.name} ${c.collection ?? ''}`.trim();
      const at = (t: number | null) => (t === null ? null : ms(t - sent, 2));
      return {
        body,
        measured: {
          status: response.status,
          ms: ms(answered - sent, 2),
          commands: own.length,
          roundTrips: sequentialRoundTrips(own),
          timeline: own.map((c) => ({
            command: label(c),
            startMs: at(c.start)!,
            endMs: at(c.end),
            ok: c.ok,
            ...(c.writeErrors.length > 0 && { writeErrors: c.writeErrors }),
          })),
          ownershipChecks: ownershipCalls
            .slice(checksFrom)
            .map((c) => ({ startMs: at(c.start)!, endMs: at(c.end)! })),
          afterAnswer: late.map(label),
        },
      };
    };

    const commitHash = () => randomBytes(20).toString('hex');
    /** One request of each kind, in a deployment's order; returns what each measured. */
    const round = async (index: number): Promise<Record<string, Measured>> => {
      const out: Record<string, Measured> = {};
      const created = await send('POST', '', 201, { body: { commitHash: commitHash() } });
      out.trigger = created.measured;
      const key = `bench-${index}-${randomBytes(6).toString('hex')}`;
      const body = { commitHash: commitHash(), commitMessage: 'round trips' };
      const first = await send('POST', '', 201, { body, headers: { 'Idempotency-Key': key } });
      out['trigger, Idempotency-Key, first'] = first.measured;
      const repeat = await send('POST', '', 201, { body, headers: { 'Idempotency-Key': key } });
      if (repeat.body.id !== first.body.id) throw new Error('the repeat made another deployment');
      out['trigger, Idempotency-Key, repeat'] = repeat.measured;
      out.get = (await send('GET', `/${created.body.id}`, 200)).measured;
      const list = await send('GET', `?limit=${PAGE}`, 200);
      out['list, first page'] = list.measured;
      if (!list.body.nextCursor) throw new Error('the first page has no nextCursor');
      out['list, cursor page'] = (
        await send('GET', `?limit=${PAGE}&cursor=${list.body.nextCursor}`, 200)
      ).measured;
      const byStatus = await send('GET', `?limit=${PAGE}&status=DEPLOYED`, 200);
      out['list ?status=DEPLOYED, first page'] = byStatus.measured;
      if (!byStatus.body.nextCursor) throw new Error('the status page has no nextCursor');
      out['list ?status=DEPLOYED, cursor page'] = (
        await send('GET', `?limit=${PAGE}&status=DEPLOYED&cursor=${byStatus.body.nextCursor}`, 200)
      ).measured;
      // The newest: the trigger's own deployment was superseded (CANCELLED) by it.
      const cancelled = await send('POST', `/${first.body.id}/cancel`, 200);
      if (cancelled.body.status !== 'CANCELLED') throw new Error('cancel did not cancel');
      out.cancel = cancelled.measured;
      return out;
    };

    say('warm-up round (not counted)');
    await round(0);
    const rounds: Record<string, Measured>[] = [];
    for (let i = 1; i <= ROUNDS; i++) rounds.push(await round(i));

    const kinds = Object.keys(rounds[0]!);
    const summary = Object.fromEntries(
      kinds.map((kind) => {
        const all = rounds.map((r) => r[kind]!);
        const commandsPer = all.map((m) => m.commands);
        const tripsPer = all.map((m) => m.roundTrips);
        const last = all[all.length - 1]!;
        return [
          kind,
          {
            commands: Math.max(...commandsPer),
            roundTrips: Math.max(...tripsPer),
            target: TARGETS[kind] ?? OTHERS_TARGET,
            sameInEveryRound:
              new Set(commandsPer).size === 1 &&
              new Set(tripsPer).size === 1 &&
              // The same commands (parallel ones may start in either order).
              new Set(
                all.map((m) =>
                  m.timeline
                    .map((t) => t.command)
                    .sort()
                    .join(','),
                ),
              ).size === 1,
            commandsSent: last.timeline.map(
              (t) => `${t.command}${t.writeErrors ? ` (write error ${t.writeErrors})` : ''}`,
            ),
            ownershipChecks: last.ownershipChecks.length,
            afterAnswer: [...new Set(all.flatMap((m) => m.afterAnswer))],
            msPerRound: all.map((m) => m.ms),
          },
        ];
      }),
    );
    for (const [kind, s] of Object.entries(summary)) {
      say(
        `${kind}: ${s.commands} commands, ${s.roundTrips} sequential round trips ` +
          `(${s.commandsSent.join(' | ')})${s.sameInEveryRound ? '' : ' [varies by round]'}`,
      );
    }
    const verdicts = Object.entries(summary).map(([kind, s]) =>
      verdict(`${kind}: sequential round trips`, s.roundTrips, '<=', s.target),
    );
    const commandsWithinTarget = Object.fromEntries(
      Object.entries(summary).map(([kind, s]) => [kind, s.commands <= s.target]),
    );

    writeResults(
      'round-trips',
      {
        settings: { rounds: ROUNDS, seededDeployments: SEEDED, pageSize: PAGE },
        server,
        summary,
        commandsWithinTarget,
        lastRound: rounds[rounds.length - 1],
        verdicts,
      },
      {
        stack: 'none: the deployments app in the benchmark process (createApp), projects stub',
        database: server.ferretdbVersion
          ? `FerretDB (buildInfo: ferretdbVersion ${server.ferretdbVersion}, ` +
            `version ${server.version}) at ${MONGO_URL}`
          : `MongoDB ${server.version} at ${MONGO_URL}`,
        infrastructure: `${MONGO_URL}, scratch database ${dbName} (dropped)`,
      },
    );
  } finally {
    for (const server of servers) {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await connection.dropDatabase().catch(() => undefined);
    await connection.close();
  }
});
