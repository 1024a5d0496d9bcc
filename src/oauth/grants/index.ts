/** The grant registry: the token endpoint dispatches on grant_type through this table only. */
import { authorizationCode } from './authorization-code.ts';
import { clientCredentials } from './client-credentials.ts';
import type { Grant } from './grant.ts';
import { jwtProfile } from './jwt-profile.ts';
import { refreshToken } from './refresh-token.ts';
import { tokenExchange } from './token-exchange.ts';

const grants: readonly Grant[] = [authorizationCode, refreshToken, clientCredentials, jwtProfile, tokenExchange];

export const grantRegistry: ReadonlyMap<string, Grant> = new Map(grants.map((g) => [g.grantType, g]));
