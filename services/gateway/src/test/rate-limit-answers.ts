import { errorBody } from '@platform/shared/testing';

interface Answer {
  status: number;
  headers: Headers;
  body?: unknown;
}

/** Whole seconds, both ends included. */
type Seconds = [least: number, most: number];

function expectSecondsWithin(header: string | null, [least, most]: Seconds) {
  const seconds = Number(header);
  expect(seconds).toBeGreaterThanOrEqual(least);
  expect(seconds).toBeLessThanOrEqual(most);
}

/** 429 RATE_LIMITED, with a Retry-After within `retryAfter`. */
export function expectRefused(response: Answer, retryAfter: Seconds) {
  expect(response.status).toBe(429);
  expect(response.body).toEqual(errorBody('RATE_LIMITED'));
  expectSecondsWithin(response.headers.get('retry-after'), retryAfter);
}

/** An answer's status, RateLimit-Limit and RateLimit-Remaining. */
export const rateLimitFields = (r: Answer) => [
  r.status,
  r.headers.get('ratelimit-limit'),
  r.headers.get('ratelimit-remaining'),
];

/**
 * Four answers under a limit of 3: the RateLimit fields count down to the refusal, which has them
 * too; every RateLimit-Reset is within `reset`, and the refusal's Retry-After is its reset.
 */
export function expectCountdownOfThree(answers: Answer[], reset: Seconds) {
  expect(answers.map(rateLimitFields)).toEqual([
    [200, '3', '2'],
    [200, '3', '1'],
    [200, '3', '0'],
    [429, '3', '0'],
  ]);
  for (const answer of answers) expectSecondsWithin(answer.headers.get('ratelimit-reset'), reset);
  expect(answers[3]!.headers.get('retry-after')).toBe(answers[3]!.headers.get('ratelimit-reset'));
}

/** The gateway's request limits a minute: per session, per account and per client network. */
export const limitsPerMinute = (session: number, account: number, ip: number) => ({
  RATE_LIMIT_PER_MINUTE: String(session),
  ACCOUNT_RATE_LIMIT_PER_MINUTE: String(account),
  IP_RATE_LIMIT_PER_MINUTE: String(ip),
});
