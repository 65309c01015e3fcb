// `testTimeout` is a global jest option that the root multi-project run does not take from the
// projects, so each project sets its own through this setup file (JEST_TEST_TIMEOUT_MS).
jest.setTimeout(Number(process.env.JEST_TEST_TIMEOUT_MS ?? 30_000));
