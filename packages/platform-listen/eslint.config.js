const { config } = require('@platform/eslint-config');

module.exports = [...config({ tsconfigRootDir: __dirname })];
