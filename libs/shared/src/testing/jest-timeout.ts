// `testTimeout` is a global jest option that the root multi-project run does not take from the
// projects, so each project sets its own through this setup file (JEST_TEST_TIMEOUT_MS).
jest.setTimeout(Number(process.env.JEST_TEST_TIMEOUT_MS ?? 30_000));

// No retries: a retried race hides the race. Someone chasing a flaky test may opt in with
// JEST_RETRY_TIMES=n; scripts/test.sh then names every test that needed one in its summary.
jest.retryTimes(Number(process.env.JEST_RETRY_TIMES ?? 0), { logErrorsBeforeRetry: true });
