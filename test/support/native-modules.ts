/**
 * setupFilesAfterEnv: every import of a module under src/ or gen/, and of the libraries below, gets
 * the jest worker's one native instance (environment.ts), unless the file asked for its own copies.
 * The libraries are the ones suites import beside the project: sharing them skips loading them into
 * every file's context (jose alone is 92 modules), and a ConnectError or a protobuf message a suite
 * makes is then the same class the project checks for. @grpc/proto-loader stays out: its options take
 * the test context's own constructors (`enums: String`), which a shared copy would not recognize.
 */
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';

const LIBRARIES = [
  '@bufbuild/protobuf',
  '@bufbuild/protobuf/codegenv2',
  '@bufbuild/protobuf/wkt',
  '@bufbuild/protobuf/wire',
  '@connectrpc/connect',
  '@connectrpc/connect/protocol',
  '@connectrpc/connect-node',
  'jose',
  'kysely',
  'oauth4webapi',
  'openid-client',
  'pg',
  'playwright-core',
  'yaml',
];

const nativeImport = (globalThis as { __gatehouseNativeImport?: (specifier: string) => Promise<object> }).__gatehouseNativeImport;
if (nativeImport) {
  const root = path.resolve(import.meta.dirname, '../..');
  for (const folder of ['src', 'gen']) {
    for (const entry of fs.readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (!/\.(ts|js)$/.test(entry) || entry.endsWith('.test.ts') || entry.endsWith('.d.ts')) continue;
      const file = path.join(root, folder, entry);
      jest.unstable_mockModule(file, () => nativeImport(file));
    }
  }
  for (const library of LIBRARIES) jest.unstable_mockModule(library, () => nativeImport(library));
}
