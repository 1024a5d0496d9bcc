/** The grant registry: the token endpoint dispatches on grant_type through this table only. */
import { clientCredentials } from './client-credentials.ts';
import type { Grant } from './grant.ts';
import { jwtProfile } from './jwt-profile.ts';

const grants: readonly Grant[] = [clientCredentials, jwtProfile];

export const grantRegistry: ReadonlyMap<string, Grant> = new Map(grants.map((g) => [g.grantType, g]));
