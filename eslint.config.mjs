// ESLint flat config. docs/architecture.md "Lint and format" says which set applies where, and why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The rooms that run in production get typescript-eslint's type-checked set: its promise rules
// (no-floating-promises, no-misused-promises, await-thenable) catch rejections nobody handles.
const SERVER = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'sip-config', 'esl', 'evals'].map((r) => `${r}/**/*.ts`);
// knex hands back `any` rows until its table types are declared (issue 33, "a typed data layer"); until then the
// no-unsafe-* rules would flag every query in these two rooms rather than a mistake.
const KNEX_ANY = ['core/**/*.ts', 'control-api/**/*.ts'];
const TESTS = ['test/**/*.ts', 'scripts/**/*.ts'];

export default tseslint.config(
  {
    ignores: [
      'dist/**', // bundles and generated types (web bundles, dist/reference-api/paths.d.ts)
      'coverage/**',
      '.data/**',
      'media-engine/native/build/**', // node-gyp output
      'web/*/public/**', // static assets served beside the bundles
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore marks a parameter or binding kept on purpose (an interface's shape, a rest split).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // `declare global { namespace Express { ... } }` is how Express's Request is augmented.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // `interface A extends B {}` is how a module augmentation adds B's members to A.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    files: ['**/*.{js,cjs,mjs}'],
    languageOptions: {
      globals: Object.fromEntries(['require', 'module', 'exports', 'process', 'console', 'global', '__dirname', 'setTimeout', 'setInterval', 'clearTimeout'].map((g) => [g, 'readonly'])),
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' }, // CommonJS files (the mocha reporter, the soak probe)
  },
  {
    files: [...SERVER, ...TESTS],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  ...tseslint.configs.recommendedTypeChecked.map((c) => ({ ...c, files: SERVER })),
  {
    files: SERVER,
    rules: {
      // Off: the code writes `!` on indexed reads as if noUncheckedIndexedAccess were on (170 places), which this
      // rule calls unnecessary under our tsconfig; and core/repos' casts go with the knex table types.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Off: `async` without `await` on an interface's method is deliberate: a throw inside becomes a rejection
      // the caller handles; removing `async` to please the rule would turn it into a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      // A promise that relays another's rejection (a socket's error, an abort reason) passes on what it got.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    files: KNEX_ANY,
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Tests and scripts: `recommended`, plus the promise rules, since an assertion left floating cannot fail a test.
    files: TESTS,
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // Tests read supertest bodies (`any` by supertest's own types) and drive drachtio-srf apps through more of
      // its surface than its declarations describe (proxy, b2bua, PRACK); the product code stays any-free.
      '@typescript-eslint/no-explicit-any': 'off',
      // chai's property assertions (`.to.exist`, `.and.not.empty`) are expressions by design.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  {
    // The typed conformance client is checked against the generated reference types (tsconfig.reference.json).
    files: ['test/conformance/typed/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: './tsconfig.reference.json' } },
  },
);
