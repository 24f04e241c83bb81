module.exports = require('@platform/eslint-config').config({ tsconfigRootDir: __dirname });
