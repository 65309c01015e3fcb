import express, { type Express } from 'express';
import { z } from 'zod';
import {
  commandRule,
  environmentNameRule,
  errorHandler,
  healthCheckPathRule,
  notFoundHandler,
  replicasRule,
  rootDirectoryRule,
  validate,
  variableValueRule,
  type Logger,
} from '@platform/shared';
import type { Supervisor } from './supervisor';

const id = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and - only');

/**
 * A release as the control API takes it. What came from a tenant (the command, the root
 * directory, the health check path, the variables) is checked with the rules the projects and
 * deployments services apply (libs/shared source-rules), once more where it is used: whoever
 * reaches this socket still cannot make a field an option or a second request line. Names are
 * checked by pattern only: the platform itself sets PATH, HOME and PLATFORM_*.
 */
export const releaseSpecSchema = z
  .object({
    serviceId: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and - (a host label)'),
    releaseId: id,
    workspace: z
      .string()
      .startsWith('/', 'must be an absolute path')
      // eslint-disable-next-line no-control-regex -- refusing control characters is the point
      .regex(/^[^\x00-\x1f\x7f]*$/, 'must not contain control characters'),
    rootDirectory: rootDirectoryRule().optional(),
    command: commandRule().min(1),
    env: z.record(environmentNameRule(), variableValueRule()),
    secretNames: z.array(environmentNameRule()).max(500).optional(),
    healthCheckPath: healthCheckPathRule(),
    healthTimeoutMs: z.number().int().positive(),
    replicas: replicasRule().optional(),
  })
  .strict();

/** A promotion: the release's deployment's place in its service's order (newest wins). */
const promoteSchema = z.object({ generation: z.string().max(64).optional() }).strict();

const logQuery = z.object({ offset: z.coerce.number().int().min(0).default(0) });

/** The most of a release log one read returns; read again from `nextOffset` for more. */
const LOG_READ_BYTES = 256 * 1024;

/**
 * The supervisor's control API, served on a unix socket in RUNTIME_DIR (so only this machine's
 * user reaches it). Used through RuntimeClient (client.ts), which documents each call.
 */
export function createControlApp(supervisor: Supervisor, logger: Logger): Express {
  const app = express();
  // Variables: up to 200 of 32 KiB each.
  app.use(express.json({ limit: '8mb' }));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', pid: process.pid });
  });
  app.get('/releases', (_req, res) => {
    res.json({ releases: supervisor.list() });
  });
  app.post('/releases', async (req, res) => {
    const release = await supervisor.start(validate(releaseSpecSchema, req.body));
    res.status(201).json(release);
  });
  app.get('/releases/:releaseId', (req, res) => {
    res.json(supervisor.describe(req.params.releaseId));
  });
  app.post('/releases/:releaseId/promote', async (req, res) => {
    const { generation } = validate(promoteSchema, req.body ?? {});
    res.json(await supervisor.promote(req.params.releaseId, generation));
  });
  app.delete('/releases/:releaseId', async (req, res) => {
    await supervisor.stopRelease(req.params.releaseId);
    res.status(204).end();
  });
  app.delete('/services/:serviceId', async (req, res) => {
    await supervisor.stopService(req.params.serviceId);
    res.status(204).end();
  });
  app.get('/releases/:releaseId/log', async (req, res) => {
    const { offset } = validate(logQuery, req.query);
    res.json(await supervisor.readLog(req.params.releaseId, offset, LOG_READ_BYTES));
  });
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
