// The end-to-end tests wait on whole pipelines and webhook deliveries.
jest.setTimeout(60_000);

// No retries unless asked for (libs/shared/src/testing/jest-timeout.ts says why).
jest.retryTimes(Number(process.env.JEST_RETRY_TIMES ?? 0), { logErrorsBeforeRetry: true });
