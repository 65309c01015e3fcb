// Runs every workspace's tests as one jest invocation (`npm test` wraps it with the infrastructure).
/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30_000,
  projects: [
    '<rootDir>/libs/*',
    '<rootDir>/services/*',
    '<rootDir>/tools/*',
    '<rootDir>/apps/*',
    '<rootDir>/e2e',
    '<rootDir>/conformance',
  ],
};
