// Shared jest settings for every workspace: swc strips types (tsc -b does the type checking),
// @platform/shared resolves to its sources so tests never need a build first, and the global
// setup finds or starts the real Mongo, Kafka and Redis the tests talk to.
const path = require('node:path');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleNameMapper: {
    '^@platform/shared$': path.join(__dirname, 'libs/shared/src/index.ts'),
    '^@platform/shared/testing$': path.join(__dirname, 'libs/shared/src/testing/index.ts'),
    '^@platform/kube$': path.join(__dirname, 'libs/kube/src/index.ts'),
  },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  globalSetup: path.join(__dirname, 'libs/shared/src/testing/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'libs/shared/src/testing/global-teardown.ts'),
  setupFilesAfterEnv: [path.join(__dirname, 'libs/shared/src/testing/jest-timeout.ts')],
  testTimeout: 30_000,
};
