import { readFile } from 'node:fs/promises';
import { Router } from 'express';
import { notFound } from '@platform/shared';

export const OPENAPI_PATH = '/api/openapi.json';

/**
 * The OpenAPI document (services/gateway/openapi.json, maintained by the lead), public like
 * the spec it describes. Read on each request so that a document added later is served as is.
 */
export function openApiRouter(file: string): Router {
  const router = Router();
  router.get(OPENAPI_PATH, async (_req, res) => {
    let document: string;
    try {
      document = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('OpenAPI document');
      throw err;
    }
    res.type('application/json').send(document);
  });
  return router;
}
