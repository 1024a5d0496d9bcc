/** Turns a bearer access token into the API's Principal: token verified, user active, roles loaded. */
import type { Directory } from '../instance/directory.ts';
import type { Principal } from '../kernel/principal.ts';
import { activeTokenUser, actorChain } from './token-user.ts';
import type { Tokens } from './tokens.ts';

export class InvalidAccessToken extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'InvalidAccessToken';
  }
}

export function bearerAuthenticator(tokens: Tokens, directory: Directory, instanceId: string) {
  return async (token: string): Promise<Principal> => {
    const claims = await tokens.verifyAccessToken(token);
    if (!claims) throw new InvalidAccessToken('token is invalid, expired or revoked');
    const user = await activeTokenUser(directory, instanceId, claims);
    if (!user) throw new InvalidAccessToken('the subject or actor of the token is not an active user');
    return {
      instanceId,
      userId: user.id,
      orgId: user.orgId,
      kind: user.kind,
      clientId: claims.clientId,
      scopes: new Set(claims.scopes),
      audience: claims.audience,
      roles: user.roles,
      tokenId: claims.jti,
      actorId: actorChain(claims.actor)?.[0],
      amr: claims.amr ?? [],
      authTime: claims.authTime,
      sessionId: claims.sessionId,
    };
  };
}
