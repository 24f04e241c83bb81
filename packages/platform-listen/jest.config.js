module.exports = require('@platform/jest-config').config({ rootDir: __dirname });
