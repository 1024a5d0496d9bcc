/** jest globalTeardown: removes the run's migrated database (see snapshot.ts) and its RSA keys (key-pool.ts). */
import { removeKeyPool } from './key-pool.ts';
import { removeRunSnapshot } from './snapshot.ts';

export default async function globalTeardown(): Promise<void> {
  removeKeyPool();
  await removeRunSnapshot();
}
