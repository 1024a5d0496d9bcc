/**
 * The token response every grant that issues an access token shares (RFC 6749 §5.1,
 * docs/endpoints.md#token-endpoint): the access token, Bearer, its lifetime and the granted scope,
 * plus an ID token when openid was granted.
 */
import type { Gatehouse } from '../../context.ts';
import type { IssuedAccessToken } from '../../domain/tokens/access-token-claims.ts';
import { issueIdToken, type IdTokenRequest } from '../id-token.ts';
import type { TokenResponse } from './grant.ts';

/** The `type` label of gatehouse_tokens_issued_total for a response: what its main token is. */
export function issuedType(response: TokenResponse): 'jwt' | 'opaque' | 'id_token' {
  if (response.token_type === 'N_A') return 'id_token'; // RFC 8693 §2.2.1: an ID token in access_token
  return response.access_token.includes('.') ? 'jwt' : 'opaque';
}

/** Counts one issued response; called once per response, by the endpoint that answers it. */
export function countIssued(gh: Gatehouse, grant: string, response: TokenResponse): void {
  gh.metrics.tokensIssued.inc({ grant, type: issuedType(response) });
}

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
