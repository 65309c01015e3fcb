// The end-to-end tests wait on whole pipelines and webhook deliveries.
jest.setTimeout(60_000);

// One retry against the real stack on a small shared machine, the failed attempt printed
// (libs/shared/src/testing/jest-timeout.ts says why).
jest.retryTimes(Number(process.env.JEST_RETRY_TIMES ?? 1), { logErrorsBeforeRetry: true });
