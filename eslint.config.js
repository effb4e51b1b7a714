import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'src/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'src/main.ts', 'scripts/**', 'bench/**', 'test/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Scripts the pages load in the browser.
    files: ['assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // API tests read JSON bodies whose shape the assertions check.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
