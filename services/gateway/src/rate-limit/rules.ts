import type { Request } from 'express';
import type { Config } from '../config';
import { clientIp, sessionAccount, sessionDigest, type RateLimitRule } from './rate-limit';

/**
 * The operations that cost far more than a request (a build, an outgoing HTTP call), each with
 * a stricter limit per account. A path matches in any letter case (ids are lower-case hex, but
 * the services take them, and their routes, in any case), percent-encoded or not, with doubled
 * or trailing slashes and any query: no spelling of the path steps around the limit.
 */
const SEGMENT = '[^/]+';
export const EXPENSIVE_OPERATIONS = {
  /** A trigger, a redeploy or a rollback: each starts a deployment (a build, or a start of one). */
  deploy: new RegExp(
    `^/api/projects/${SEGMENT}/services/${SEGMENT}/deployments(/${SEGMENT}/(redeploy|rollback))?/*$`,
    'i',
  ),
  /** A webhook's test send: an HTTP request to the webhook's URL. */
  webhookTest: new RegExp(`^/api/projects/${SEGMENT}/webhooks/${SEGMENT}/test/*$`, 'i'),
  /** A delivery sent again: an HTTP request to the webhook's URL. */
  redeliver: new RegExp(
    `^/api/projects/${SEGMENT}/webhooks/${SEGMENT}/deliveries/${SEGMENT}/redeliver/*$`,
    'i',
  ),
};
export type ExpensiveOperation = keyof typeof EXPENSIVE_OPERATIONS;

/**
 * The request's path as sent (query aside), and decoded when it decodes; runs of slashes as one,
 * as the proxy forwards them.
 */
function pathsOf(req: Request): string[] {
  const raw = req.originalUrl.split('?')[0]!.replace(/\/{2,}/g, '/');
  try {
    return [raw, decodeURIComponent(raw).replace(/\/{2,}/g, '/')];
  } catch {
    return [raw];
  }
}

/**
 * The expensive operation a method and path are, if any: always a POST, to one of its paths. A
 * documented path template (`/api/projects/{projectId}/…`) is one as well.
 */
export function expensiveOperationAt(method: string, path: string): ExpensiveOperation | undefined {
  if (method.toUpperCase() !== 'POST') return undefined;
  const operations = Object.keys(EXPENSIVE_OPERATIONS) as ExpensiveOperation[];
  return operations.find((operation) => EXPENSIVE_OPERATIONS[operation].test(path));
}

/** Whether the request is `operation`, however its path is spelled. */
export function isOperation(req: Request, operation: ExpensiveOperation): boolean {
  return pathsOf(req).some((path) => expensiveOperationAt(req.method, path) === operation);
}

/** A login the credential of which auth has verified: the account is known from here on. */
export interface VerifiedLogin {
  req: Request;
  accountId: string;
}

/**
 * The gateway's limits, by when the client they count is known. Keys are
 * `<REDIS_PREFIX>rl:<kind>:<client>`; a counter lives as long as its window.
 */
export function rateLimitRules(config: Config) {
  const key = (kind: string) => `${config.REDIS_PREFIX}rl:${kind}:`;
  const accountRule = {
    keyPrefix: key('account'),
    limit: config.ACCOUNT_RATE_LIMIT_PER_MINUTE,
  };
  const perAccount = (operation: ExpensiveOperation, limit: number, windowMs: number) => ({
    keyPrefix: key(operation),
    limit,
    windowMs,
    keyOf: (req: Request) => (isOperation(req, operation) ? sessionAccount(req) : undefined),
  });
  /** Every /api request, once its session is read. */
  const requests: RateLimitRule[] = [
    // With or without a session: one address may carry several people's sessions (NAT).
    { keyPrefix: key('ip'), limit: config.IP_RATE_LIMIT_PER_MINUTE, keyOf: clientIp },
    { keyPrefix: key('session'), limit: config.RATE_LIMIT_PER_MINUTE, keyOf: sessionDigest },
    // All of an account's sessions together: signing in again does not start a fresh count.
    { ...accountRule, keyOf: sessionAccount },
    perAccount('deploy', config.DEPLOY_RATE_LIMIT, config.DEPLOY_RATE_WINDOW),
    perAccount('webhookTest', config.WEBHOOK_TEST_RATE_LIMIT, config.WEBHOOK_TEST_RATE_WINDOW),
    perAccount('redeliver', config.REDELIVER_RATE_LIMIT, config.REDELIVER_RATE_WINDOW),
  ];
  /** Login attempts, before auth is asked: the account is not known yet. */
  const loginAttempts: RateLimitRule[] = [
    { keyPrefix: key('login'), limit: config.LOGIN_RATE_LIMIT_PER_MINUTE, keyOf: clientIp },
  ];
  /**
   * A login auth has verified, before its session starts: counted against the account, among
   * its logins and its requests (unless the request's own session, of the same account, has
   * counted it already).
   */
  const logins: RateLimitRule<VerifiedLogin>[] = [
    {
      keyPrefix: key('login-account'),
      limit: config.LOGIN_RATE_LIMIT_PER_MINUTE,
      keyOf: ({ accountId }) => accountId,
    },
    {
      ...accountRule,
      keyOf: ({ req, accountId }) => (sessionAccount(req) === accountId ? undefined : accountId),
    },
  ];
  return { requests, loginAttempts, logins };
}
