// `testTimeout` is a global jest option that the root multi-project run does not take from the
// projects, so each project sets its own through this setup file (JEST_TEST_TIMEOUT_MS).
jest.setTimeout(Number(process.env.JEST_TEST_TIMEOUT_MS ?? 30_000));

// These suites run against real Kafka, MongoDB and Redis shared by parallel workers on a small
// machine, where a rare timing failure has been seen (see the closing notes). One retry, with
// the failed attempt's errors printed; a test that fails for a reason fails twice.
jest.retryTimes(Number(process.env.JEST_RETRY_TIMES ?? 1), { logErrorsBeforeRetry: true });
