/**
 * setupFilesAfterEnv: every import of a module under src/ gets the worker's one native instance
 * (environment.ts), unless the file asks for its own copies with the `@gatehouse-vm-modules` pragma.
 */
import fs from 'node:fs';
import path from 'node:path';
import { jest } from '@jest/globals';

const nativeImport = (globalThis as { __gatehouseNativeImport?: (file: string) => Promise<object> }).__gatehouseNativeImport;
if (nativeImport) {
  const root = path.resolve(import.meta.dirname, '../../src');
  for (const entry of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts') || entry.endsWith('.test.ts')) continue;
    const file = path.join(root, entry);
    jest.unstable_mockModule(file, () => nativeImport(file));
  }
}
