module.exports = [
  ...require('@platform/eslint-config').config({
    tsconfigRootDir: __dirname,
    envFiles: ['src/config/env.ts'],
  }),
  {
    // A contract handler declared with ts-rest's decorator would miss its route's interceptors
    // (Idempotency-Key on a POST): see src/common/api-handler.ts.
    files: ['**/*.ts'],
    ignores: ['src/common/api-handler.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@ts-rest/nest',
              importNames: ['TsRestHandler'],
              message: 'Declare contract handlers with ApiHandler (src/common/api-handler.ts).',
            },
          ],
        },
      ],
    },
  },
];
