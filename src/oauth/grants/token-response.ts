/**
 * The token response every grant that issues an access token shares (RFC 6749 §5.1, seed §4.5): the
 * access token, Bearer, its lifetime and the granted scope, plus an ID token when openid was granted.
 */
import type { Gatehouse } from '../../context.ts';
import type { IssuedAccessToken } from '../../domain/tokens.ts';
import { issueIdToken, type IdTokenRequest } from '../id-token.ts';
import type { TokenResponse } from './grant.ts';

export async function accessTokenResponse(
  gh: Gatehouse,
  issued: IssuedAccessToken,
  scopes: string[],
  idToken: Omit<IdTokenRequest, 'scopes' | 'accessToken'>,
): Promise<TokenResponse> {
  const response: TokenResponse = {
    access_token: issued.token,
    token_type: 'Bearer',
    expires_in: issued.expiresIn,
    scope: scopes.join(' '),
  };
  if (scopes.includes('openid')) {
    response.id_token = await issueIdToken(gh, { ...idToken, scopes, accessToken: issued.token });
  }
  return response;
}
