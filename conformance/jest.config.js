const path = require('node:path');

/**
 * The conformance suite: MongoDB's guarantees that the product relies on, against whatever
 * server the global setup resolves (MONGO_URL, testcontainers' mongo:7, or the local FerretDB).
 * Its own setup file: these tests are never retried, since a race that fails once and then
 * passes is a broken guarantee, not a flaky test.
 * @type {import('jest').Config}
 */
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'conformance',
  rootDir: __dirname,
  setupFilesAfterEnv: [path.join(__dirname, 'src/support/jest-setup.ts')],
};
