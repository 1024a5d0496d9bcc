/** What every endpoint of a running server can reach: built once at start (server/app.ts). */
import type { Logger } from 'pino';
import type { Config } from './config/index.ts';
import type { MasterKey } from './domain/kernel/crypto.ts';
import type { Directory } from './domain/instance/directory.ts';
import type { FailureThrottle } from './domain/sign-in/failure-throttle.ts';
import type { KeyStore } from './domain/tokens/keys.ts';
import type { Tokens } from './domain/tokens/tokens.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { DB } from './store/database.ts';

export interface Gatehouse {
  config: Config;
  db: DB;
  log: Logger;
  masterKey: MasterKey;
  keys: KeyStore;
  directory: Directory;
  tokens: Tokens;
  metrics: Metrics;
  /** Failed sign-ins and client authentications per client address (docs/security.md 10.11). */
  throttle: FailureThrottle;
  /** The one instance of this deployment (docs/management-api.md#the-identity-model). */
  instanceId: string;
}
