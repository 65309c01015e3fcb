// The end-to-end tests wait on whole pipelines and webhook deliveries.
jest.setTimeout(60_000);

// No retries unless asked for (libs/shared/src/testing/jest-timeout.ts says why).
const retries = Number(process.env.JEST_RETRY_TIMES ?? 0);
if (retries > 0) jest.retryTimes(retries, { logErrorsBeforeRetry: true });
