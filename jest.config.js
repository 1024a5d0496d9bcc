// Jest runs the TypeScript sources as native ES modules: @swc/jest strips the types (Node 24 itself
// runs the same files with its built-in type stripping), and `tsc --noEmit` checks them in `npm test`.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'es6' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
