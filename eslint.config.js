import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'test/k8s-bins/**'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // `const { dropped, ...rest } = obj` is how a key is left out without `delete`.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // client-node models are plain data classes and its APIs are documented to take object
      // literals; this rule would demand \`new V1ObjectMeta()\` everywhere for no safety gain.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }],
      }],
    },
  },
  {
    // Assertions narrow types, so every later optional chain on the same value is "unnecessary";
    // in tests that only adds noise, while src keeps the rule.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unnecessary-condition': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
