/** jest globalTeardown: removes the run's migrated database (see snapshot.ts). */
import { removeRunSnapshot } from './snapshot.ts';

export default removeRunSnapshot;
