// The project's default per-test timeout (tests that need more say so in their third argument).
jest.setTimeout(Number(process.env.JEST_TEST_TIMEOUT_MS ?? 30_000));

// Never retried, whatever JEST_RETRY_TIMES says (the other projects retry when it asks them
// to): a conformance test that fails once and passes on a second try has seen the server break
// the guarantee it pins, and that must show.
jest.retryTimes(0);
