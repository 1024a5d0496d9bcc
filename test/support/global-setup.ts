/** jest globalSetup: migrates one database for the whole run (see snapshot.ts). */
import './wasm-baseline.ts';
import { createRunSnapshot } from './snapshot.ts';

export default createRunSnapshot;
