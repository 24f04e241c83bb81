// Shared flat config: type-aware rules that catch the bugs we care about
// (floating promises, non-exhaustive switches, type imports), zero warnings allowed. Plain
// JavaScript (scripts, benchmarks, config and hook files) gets ESLint's recommended rules on Node
// globals: no type information there, so no type-aware rules.
const js = require('@eslint/js');
const globals = require('globals');
const tseslint = require('typescript-eslint');

const TS_FILES = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const JS_FILES = ['**/*.js', '**/*.mjs', '**/*.cjs'];

/** The rules for plain JavaScript; also used by the root config for files outside packages. */
function javascript() {
  return [
    { files: JS_FILES, ...js.configs.recommended },
    {
      files: JS_FILES,
      languageOptions: {
        ecmaVersion: 2024,
        sourceType: 'commonjs',
        globals: { ...globals.node },
      },
      rules: {
        'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
        'no-var': 'error',
        'prefer-const': 'error',
      },
    },
    {
      files: ['**/*.mjs'],
      languageOptions: { sourceType: 'module' },
    },
    {
      files: ['**/*.spec.js', '**/test/**/*.js', '**/jest-setup.js'],
      languageOptions: { globals: { ...globals.jest } },
    },
  ];
}

/** @param {{ tsconfigRootDir: string, envFiles?: string[] }} options */
function config({ tsconfigRootDir, envFiles = [] }) {
  return tseslint.config(
    { ignores: ['dist/**', 'coverage/**'] },
    ...javascript(),
    ...tseslint.configs.recommendedTypeChecked.map((c) => ({ ...c, files: TS_FILES })),
    {
      files: TS_FILES,
      languageOptions: {
        parserOptions: { projectService: true, tsconfigRootDir },
      },
      rules: {
        '@typescript-eslint/no-floating-promises': 'error',
        '@typescript-eslint/switch-exhaustiveness-check': 'error',
        '@typescript-eslint/consistent-type-imports': [
          'error',
          {
            prefer: 'type-imports',
            fixStyle: 'inline-type-imports',
            disallowTypeAnnotations: false,
          },
        ],
        '@typescript-eslint/no-explicit-any': 'error',
        '@typescript-eslint/no-unused-vars': [
          'error',
          { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
        ],
        // Nest injects classes through decorator metadata; type-only imports would erase them.
        '@typescript-eslint/no-extraneous-class': 'off',
        'no-restricted-properties': [
          'error',
          {
            object: 'process',
            property: 'env',
            message: 'Read configuration through the config module.',
          },
        ],
      },
    },
    {
      files: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts', ...envFiles],
      rules: { 'no-restricted-properties': 'off' },
    },
    {
      files: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'],
      rules: {
        '@typescript-eslint/no-unsafe-assignment': 'off',
        '@typescript-eslint/no-unsafe-member-access': 'off',
        '@typescript-eslint/no-unsafe-argument': 'off',
        '@typescript-eslint/no-non-null-assertion': 'off',
        '@typescript-eslint/unbound-method': 'off',
        '@typescript-eslint/no-explicit-any': 'off',
        '@typescript-eslint/no-unsafe-call': 'off',
        '@typescript-eslint/no-unsafe-return': 'off',
      },
    },
  );
}

module.exports = { config, javascript };
