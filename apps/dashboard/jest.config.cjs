// The dashboard's pure logic (src/lib) tested in node, with no server and no browser: the pages
// themselves are tested in a real browser against a whole stack (e2e/src/dashboard).
const preset = require('../../jest.preset.js');

/** @type {import('jest').Config} */
module.exports = {
  displayName: 'dashboard',
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: preset.transform,
  testMatch: ['<rootDir>/src/**/*.test.ts'],
};
