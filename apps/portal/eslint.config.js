const shared = require('@platform/eslint-config').config({
  tsconfigRootDir: __dirname,
  // The browser tests read their settings (PORTAL_SCREENSHOTS, PLATFORM_TEST_REPORT_DIR) from env.
  envFiles: ['test/**/*.ts'],
});

module.exports = [{ ignores: ['vite.config.mts'] }, ...shared];
