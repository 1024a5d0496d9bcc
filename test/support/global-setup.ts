/** jest globalSetup: migrates one database for the whole run (see snapshot.ts) and makes its RSA keys (key-pool.ts). */
import './wasm-baseline.ts';
import { createKeyPool } from './key-pool.ts';
import { createRunSnapshot } from './snapshot.ts';

export default async function globalSetup(): Promise<void> {
  await Promise.all([createRunSnapshot(), createKeyPool()]);
}
