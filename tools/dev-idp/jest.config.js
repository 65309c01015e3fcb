/** @type {import('jest').Config} */
module.exports = { ...require('../../jest.preset.js'), displayName: 'dev-idp', rootDir: __dirname };
