/** @type {import('jest').Config} */
module.exports = { ...require('../../jest.preset.js'), displayName: 'auth', rootDir: __dirname };
