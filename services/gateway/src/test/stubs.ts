import type { IncomingHttpHeaders } from 'node:http';
import express, { type Express, type Request, type Response } from 'express';
import { CSRF_COOKIE, identityOfRequest, readCookie, type ServiceName } from '@platform/shared';
import { TEST_INTERNAL_SECRET, startTestServer, type TestServer } from '@platform/shared/testing';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /**
   * The account of the identity header, verified as the service this stub stands for verifies
   * it (made for it, for this method and path); null when refused.
   */
  accountId: string | null;
}

export interface StubService {
  name: ServiceName;
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export const GOOD_CREDENTIAL = 'good-credential';
export const STUB_ACCOUNT = {
  id: '65f000000000000000000001',
  email: 'ada@example.com',
  name: 'Ada',
};

/** Paths the stubs answer specially, to see how the gateway passes answers through. */
export const STUB_PATHS = {
  conflict: '/api/projects/stub-conflict',
  hang: '/api/projects/stub-hang',
};

/**
 * Answers like auth's login callback: a known credential and a matching CSRF cookie pass. The
 * body is read as text (`express.text`).
 */
export function stubLogin(req: Request, res: Response) {
  const body = JSON.parse(req.body as string) as { credential?: string; csrfToken?: string };
  if (!body.csrfToken || body.csrfToken !== readCookie(req.headers.cookie, CSRF_COOKIE)) {
    res.status(403).json({ error: 'CSRF_FAILED', message: 'The CSRF token does not match.' });
    return;
  }
  if (body.credential !== GOOD_CREDENTIAL) {
    res
      .status(401)
      .json({ error: 'UNAUTHORIZED', message: 'Invalid credential: login is required.' });
    return;
  }
  res.json(STUB_ACCOUNT);
}

function stubApp(name: ServiceName, received: ReceivedRequest[]): Express {
  const app = express();
  app.use(express.text({ type: () => true, limit: '1mb' }));
  app.use((req, _res, next) => {
    received.push({
      method: req.method,
      path: req.originalUrl,
      headers: req.headers,
      body: typeof req.body === 'string' ? req.body : '',
      accountId: identityOfRequest(req, TEST_INTERNAL_SECRET, name),
    });
    next();
  });
  if (name === 'auth') app.post('/api/accounts/google-auth-login-callback', stubLogin);
  app.all(STUB_PATHS.conflict, (_req, res) => {
    res.status(409).set('x-stub', 'conflict').json({ error: 'CONFLICT', message: 'Name taken.' });
  });
  app.all(STUB_PATHS.hang, () => {
    // Never answers: the gateway's upstream timeout must.
  });
  app.use((req, res) => {
    res.json({ service: name, method: req.method, path: req.originalUrl });
  });
  return app;
}

/** A stand-in for one backend service that records every request it gets. */
export async function startStubService(name: ServiceName): Promise<StubService> {
  const received: ReceivedRequest[] = [];
  const server: TestServer = await startTestServer(stubApp(name, received));
  return { name, url: server.url, received, close: () => server.close() };
}
