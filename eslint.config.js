// Type-aware lint of every TypeScript file (typescript-eslint's recommended type-checked rules),
// plus the two rules this codebase leans on: no promise left floating (a lost rejection is a
// crash or a silent failure in a server) and type-only imports written as such
// (verbatimModuleSyntax erases nothing else). `pnpm lint:code`, a CI step.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/generated/**',
      '**/drizzle/**',
      'deploy/**',
      'test-output/**',
      '**/.test-build-*/**',
      // Type-checked against the packed SDK in a fresh project by pnpm check:sdk-consumer.
      'tools/sdk-consumer/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // Tool configuration in CommonJS (dependency-cruiser's).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // `{ secret, ...rest }` drops a field on purpose; `_name` marks a parameter kept for its
      // position.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // Repository functions are async for both databases alike, though on SQLite their work
      // is synchronous (and must stay so inside a transaction): an async function without an
      // await is the design there, not a slip.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Configuration files and plain JavaScript are in no tsconfig project.
    files: ['**/*.config.ts', '**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', URL: 'readonly' },
    },
  },
);
