// Shared jest settings for every workspace: swc strips types (tsc -b does the type checking),
// @platform/shared resolves to its sources so tests never need a build first, and the global
// setup finds or starts the real Mongo, Kafka and Redis the tests talk to.
const path = require('node:path');

const ESM_ONLY = '(@kubernetes/client-node|openid-client|oauth4webapi|jose)';
const swc = ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': swc,
    // @kubernetes/client-node 1.x and its OpenID client are ES modules only (libs/kube/src/client.ts).
    [`/node_modules/${ESM_ONLY}/.+\\.m?js$`]: swc,
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY}/)`],
  moduleNameMapper: {
    '^@platform/shared$': path.join(__dirname, 'libs/shared/src/index.ts'),
    '^@platform/shared/testing$': path.join(__dirname, 'libs/shared/src/testing/index.ts'),
    '^@platform/kube$': path.join(__dirname, 'libs/kube/src/index.ts'),
    '^@platform/kube/testing$': path.join(__dirname, 'libs/kube/src/testing/index.ts'),
  },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  globalSetup: path.join(__dirname, 'libs/shared/src/testing/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'libs/shared/src/testing/global-teardown.ts'),
  setupFilesAfterEnv: [path.join(__dirname, 'libs/shared/src/testing/jest-timeout.ts')],
  testTimeout: 30_000,
};
