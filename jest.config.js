// Jest runs the TypeScript sources as native ES modules: @swc/jest strips the types (Node 24 itself
// runs the same files with its built-in type stripping), and `tsc --noEmit` checks them in `npm test`.
// The global setup migrates one database for the whole run, which every suite's database copies
// (test/support/snapshot.ts); the embedded database's WebAssembly runs on V8's baseline compiler
// (test/support/wasm-baseline.ts); hooks that start servers get a longer budget than tests
// (test/support/hook-timeouts.ts). The suites under test/ share the worker's one copy of the project's
// modules (test/support/environment.ts, which Node loads itself: it stays out of the transform).
export default {
  testEnvironment: '<rootDir>/test/support/environment.ts',
  transformIgnorePatterns: ['/node_modules/', '<rootDir>/test/support/environment\\.ts$'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'es6' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/wasm-baseline.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/hook-timeouts.ts', '<rootDir>/test/support/native-modules.ts'],
  testTimeout: 30000,
  // test/ops/connections.test.ts runs its waiting cases at once (it.concurrent); 5 at a time is jest's default
  maxConcurrency: 10,
  // Three workers on the two cores the suite is sized for: a fifth of a file's time is spent waiting
  // (health probes, mail polls, timers, Chromium), and the third file fills it. Measured on PostgreSQL:
  // 136 s with two workers, 124 s with three.
  maxWorkers: 3,
};
