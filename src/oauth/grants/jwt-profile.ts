/**
 * grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523 §2.1;
 * docs/endpoints.md#token-endpoint): a machine user signs an assertion with one of its registered
 * keys (ZITADEL key file: iss = sub = user id, kid = key id) and receives an access token, and an
 * ID token when openid is asked for.
 */
import { JWT_BEARER } from '../../oidc/grant-types.ts';
import type { Gatehouse } from '../../context.ts';
import type { User } from '../../domain/instance/directory.ts';
import { unverifiedIssuer, verifyOneTimeAssertion } from '../assertions.ts';
import { InvalidGrant } from '../errors.ts';
import { required } from '../../http/form.ts';
import { audienceFor, checkScopes, parseScope } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { accessTokenResponse } from './token-response.ts';

export { JWT_BEARER };

export const jwtProfile: Grant = {
  grantType: JWT_BEARER,
  metricName: 'jwt_bearer',
  parameters: ['assertion', 'scope'],
  clientAuth: 'assertion',
  machines: true,
  handle,
};

/**
 * RFC 7523 §3: iss and sub name the machine user, aud names us, the signature verifies;
 * docs/security.md 10.9: exp and iat near, and the assertion accepted once (by jti, or by its hash:
 * ZITADEL's key-file SDKs send no jti).
 */
async function verifyMachineAssertion(gh: Gatehouse, assertion: string, endpointUrl: string): Promise<User> {
  const issuer = unverifiedIssuer(assertion, 'assertion');
  const user = await gh.directory.user(issuer);
  if (!user || user.kind !== 'machine' || user.instanceId !== gh.instanceId) throw new InvalidGrant(`unknown issuer ${issuer}`);
  if (user.state !== 'active') throw new InvalidGrant('machine user is not active');
  await verifyOneTimeAssertion(gh.db, assertion, {
    name: 'assertion',
    keys: user.keys,
    party: user.id,
    audiences: [gh.config.externalUrl, endpointUrl],
    requiredClaims: ['exp', 'iat'],
    now: new Date(),
    reject: (detail) => new InvalidGrant(detail),
  });
  return user;
}

async function handle({ gh, params, endpointUrl }: GrantContext): Promise<TokenResponse> {
  // parse
  const assertion = required(params, 'assertion');
  const requested = parseScope(required(params, 'scope')).filter((s) => s !== 'offline_access');
  // validate
  const user = await verifyMachineAssertion(gh, assertion, endpointUrl);
  const granted = await checkScopes(gh, requested, user.orgId); // docs/security.md 10.6: the machine user's organization
  // issue: the machine user is its own client here
  const clientId = user.id;
  const issued = await gh.tokens.issueAccessToken({
    instanceId: gh.instanceId,
    type: user.accessTokenType,
    subject: user.id,
    clientId,
    scopes: granted.scopes,
    audience: audienceFor(gh, clientId, undefined, granted),
  });
  const response = await accessTokenResponse(gh, issued, granted.scopes, {
    user,
    clientId,
    authTime: new Date(issued.claims.iat * 1000),
  });
  return response;
}
