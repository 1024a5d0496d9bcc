/**
 * grant_type=client_credentials (RFC 6749 §4.4; docs/decisions.md#machine-users-as-clients): a
 * machine user authenticates with its secret (client_secret_basic or client_secret_post) and
 * receives an access token, never a refresh token (RFC 6749 §4.4.3).
 */
import { CLIENT_CREDENTIALS } from '../../oidc/grant-types.ts';
import { UnauthorizedClient } from '../errors.ts';
import { required } from '../../http/form.ts';
import { audienceFor, checkScopes, parseScope } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';

export const clientCredentials: Grant = {
  grantType: CLIENT_CREDENTIALS,
  metricName: 'client_credentials',
  parameters: ['scope'],
  clientAuth: ['client_secret_basic', 'client_secret_post'],
  machines: true,
  handle,
};

async function handle({ gh, params, client }: GrantContext): Promise<TokenResponse> {
  // parse
  const requested = parseScope(required(params, 'scope')).filter((s) => s !== 'offline_access');
  // validate: only machine users hold client credentials (applications sign in users instead)
  if (client?.kind !== 'machine') throw new UnauthorizedClient('client_credentials is only for machine users');
  const granted = await checkScopes(gh, requested, client.user.orgId);
  // issue
  const user = client.user;
  const issued = await gh.tokens.issueAccessToken({
    instanceId: gh.instanceId,
    type: user.accessTokenType,
    subject: user.id,
    clientId: client.clientId,
    scopes: granted.scopes,
    audience: audienceFor(gh, client.clientId, undefined, granted),
  });
  return { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn, scope: granted.scopes.join(' ') };
}
