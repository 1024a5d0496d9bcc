/**
 * grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523 §2.1; seed §4.5): a machine user
 * signs an assertion with one of its registered keys (ZITADEL key file: iss = sub = user id, kid =
 * key id) and receives an access token, and an ID token when openid is asked for.
 */
import { createPublicKey } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Gatehouse } from '../../context.ts';
import type { User } from '../../domain/directory.ts';
import { candidateKeys } from '../client-auth/private-key-jwt.ts';
import { InvalidGrant, InvalidRequest } from '../errors.ts';
import { parseScope, required } from '../form.ts';
import { audienceFor, checkScopes } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { accessTokenResponse } from './token-response.ts';

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export const jwtProfile: Grant = {
  grantType: JWT_BEARER,
  parameters: ['assertion', 'scope'],
  clientAuth: 'assertion',
  machines: true,
  handle,
};

function unverifiedIssuer(assertion: string): string {
  const parts = assertion.split('.');
  if (parts.length !== 3) throw new InvalidRequest('assertion is not a JWT');
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as JWTPayload;
    if (typeof payload.iss !== 'string' || payload.iss === '') throw new Error('no iss');
    return payload.iss;
  } catch {
    throw new InvalidRequest('assertion is not a JWT');
  }
}

/** RFC 7523 §3: iss and sub name the machine user, aud names us, exp is required, the signature verifies. */
async function verifyAssertion(gh: Gatehouse, assertion: string, endpointUrl: string): Promise<User> {
  const issuer = unverifiedIssuer(assertion);
  const user = await gh.directory.user(issuer);
  if (!user || user.kind !== 'machine' || user.instanceId !== gh.instanceId) throw new InvalidGrant(`unknown issuer ${issuer}`);
  if (user.state !== 'active') throw new InvalidGrant('machine user is not active');
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
  } catch {
    throw new InvalidRequest('assertion is not a JWT');
  }
  const now = new Date();
  const keys = candidateKeys(user.keys, kid, now);
  if (keys.length === 0) throw new InvalidGrant('no registered key matches the assertion');
  for (const entry of keys) {
    try {
      await jwtVerify(assertion, createPublicKey(entry.pem), {
        algorithms: ALGORITHMS,
        issuer: user.id,
        subject: user.id,
        audience: [gh.config.externalUrl, endpointUrl],
        currentDate: now,
        requiredClaims: ['exp'],
        clockTolerance: 5,
      });
      return user;
    } catch (error) {
      if (error instanceof joseErrors.JWSSignatureVerificationFailed && keys.length > 1) continue;
      throw new InvalidGrant(`assertion rejected: ${error instanceof Error ? error.message : 'invalid'}`);
    }
  }
  throw new InvalidGrant('assertion signature does not verify');
}

async function handle({ gh, params, endpointUrl }: GrantContext): Promise<TokenResponse> {
  // parse
  const assertion = required(params, 'assertion');
  const requested = parseScope(required(params, 'scope')).filter((s) => s !== 'offline_access');
  // validate
  const user = await verifyAssertion(gh, assertion, endpointUrl);
  const granted = await checkScopes(gh, requested);
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
  gh.metrics.tokensIssued.inc({ grant: 'jwt_bearer', type: user.accessTokenType });
  return response;
}
