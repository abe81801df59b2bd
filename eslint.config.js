import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The member agent's rooms, directly under src/ (src/README.md). */
const MEMBER_ROOMS = ['clusterset', 'commonarea', 'announce', 'conditions', 'importer', 'exporter'];

/** A no-restricted-imports pattern refusing a relative import that reaches one of `folders` of src/. */
function fence(folders, who) {
  return {
    regex: `^(\\./|(\\.\\./)+)(${folders.join('|')})(/|\\.js$)`,
    message: `${who} must not import this folder: src/README.md draws the fence between member rooms, the leader, common and the commands.`,
  };
}

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
  // The fence between the roles (src/README.md): a member room never imports the leader or a
  // command, the leader never imports a member room or a command, and common imports none of them.
  // eslint's own rule on the import specifier: every import in src/ is relative, so the folder a
  // specifier reaches is the folder it names after its leading ../ or ./ steps.
  {
    files: ['src/agent.ts', ...MEMBER_ROOMS.map((room) => `src/${room}/**/*.ts`)],
    rules: { 'no-restricted-imports': ['error', { patterns: [fence(['leader', 'cli'], 'a member room')] }] },
  },
  {
    files: ['src/leader/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [fence([...MEMBER_ROOMS, 'agent', 'cli'], 'the leader')] }] },
  },
  {
    files: ['src/common/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [fence([...MEMBER_ROOMS, 'agent', 'leader', 'cli'], 'common')] }] },
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
