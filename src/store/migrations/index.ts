/** The ordered list of migrations. Add a new file here; never edit a released one. */
import type { Migration } from 'kysely/migration';
import * as identity from './2026_11_22_0001_identity.ts';

export const migrations: Record<string, Migration> = {
  '2026_11_22_0001_identity': identity,
};
