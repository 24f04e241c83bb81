const { config } = require('@platform/eslint-config');

module.exports = [
  // A command's configuration is its environment: cli/env.ts reads it for platform-listen.
  ...config({ tsconfigRootDir: __dirname, envFiles: ['cli/env.ts'] }),
  {
    // The SDK runs in browsers too: only tests may use Node built-ins.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*'],
              message:
                'The SDK must run in browsers; use web APIs (fetch, Headers, AbortController).',
            },
          ],
        },
      ],
    },
  },
];
