/**
 * Authentication of API calls: verifies the bearer token, checks the scopes the called method
 * requires (docs/endpoints.md#the-api) and the Gatehouse API audience (docs/security.md 10.5), and
 * stores the caller under `principalKey`. Handlers read `ctx.values.get(principalKey)` (or
 * `requirePrincipal(ctx)`), never headers.
 *
 * Order: the scopes first (a token without the API scope is PermissionDenied,
 * docs/endpoints.md#the-api), then the audience (a token whose `aud` lacks the API is
 * Unauthenticated, docs/security.md 10.5): a token the client asked for with `openid` alone, for its
 * own audience, or one whose audience a token exchange narrowed, is not a token for this API,
 * whatever scopes it carries.
 */
import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import type { DescMethod } from '@bufbuild/protobuf';
import { apiAudienceScope } from '../config/index.ts';
import type { Principal } from '../domain/kernel/principal.ts';
import { apiError, publicError } from './errors.ts';
import type { ApiLogger } from './logger.ts';

export const principalKey = createContextKey<Principal | undefined>(undefined, { description: 'gatehouse.principal' });

/** The scope `openid`, and the reserved scope that adds the Gatehouse API audience. */
type RequiredScope = 'openid' | 'api';

/**
 * Required scopes by procedure (`package.Service/Method`) or by service (`package.Service`).
 * A method found in neither needs the strictest set, so a new service fails closed.
 */
const REQUIRED_SCOPES: Readonly<Record<string, readonly RequiredScope[]>> = {
  'zitadel.auth.v1.AuthService/AddMyAuthFactorOTP': ['openid'], // docs/endpoints.md#authservice-the-authenticator-app
  'zitadel.auth.v1.AuthService/VerifyMyAuthFactorOTP': ['openid'],
  'zitadel.auth.v1.AuthService/RemoveMyAuthFactorOTP': ['openid'],
  'zitadel.user.v3alpha.UserService': ['openid', 'api'], // docs/endpoints.md#userservice-v3alpha-the-contact-email
  'zitadel.feature.v2.FeatureService': ['openid', 'api'],
};
const DEFAULT_SCOPES: readonly RequiredScope[] = ['openid', 'api'];

export function requiredScopes(method: DescMethod, serviceName: string): string[] {
  const rule = REQUIRED_SCOPES[`${method.parent.typeName}/${method.name}`] ?? REQUIRED_SCOPES[method.parent.typeName] ?? DEFAULT_SCOPES;
  return rule.map((scope) => (scope === 'openid' ? 'openid' : apiAudienceScope(serviceName)));
}

export interface AuthOptions {
  /** Resolves a bearer token to its principal; rejects for invalid, expired or revoked tokens. */
  authenticate(token: string): Promise<Principal>;
  instanceId(): string;
  serviceName: string;
  /** The audience the reserved API scope adds to tokens (src/oauth/scopes.ts `apiAudience`). */
  apiAudience: string;
  /** Full names of the services served without a token (services.ts `PUBLIC_SERVICES`). */
  publicServices: ReadonlySet<string>;
  log: ApiLogger;
}

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token (the scheme is case-insensitive, RFC 7235 §2.1).
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

export function authInterceptor(options: AuthOptions): Interceptor {
  return (next) => async (req) => {
    // Health and reflection answer without a token (services.ts); nothing else does.
    if (options.publicServices.has(req.service.typeName)) return next(req);
    const principal = await bearerPrincipal(options, req.header.get('authorization'), requiredScopes(req.method, options.serviceName));
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
}

/**
 * The caller of an `Authorization` header, with every check of an API call: a bearer token this
 * instance issued, the `required` scopes, the API audience. Refuses with the API's ConnectErrors;
 * the asset uploads (api/assets.ts) check their callers with it too.
 */
export async function bearerPrincipal(
  options: Pick<AuthOptions, 'authenticate' | 'instanceId' | 'apiAudience' | 'log'>,
  header: string | null,
  required: readonly string[],
): Promise<Principal> {
  if (header === null) {
    // RFC 6750 §3.1: no error code when the request carries no authentication at all.
    throw apiError(Code.Unauthenticated, 'AUTH-NoToken', 'authentication required', { 'www-authenticate': 'Bearer' });
  }
  // RFC 6750 §3.1: another scheme (Basic, ...) is an unsupported method: a bare challenge, no error code.
  if (!/^bearer(?: |$)/i.test(header.trim())) {
    throw apiError(Code.Unauthenticated, 'AUTH-NoToken', 'authentication required: send "Bearer <token>"', { 'www-authenticate': 'Bearer' });
  }
  const token = BEARER.exec(header.trim())?.[1];
  if (token === undefined) throw invalidToken('AUTH-Malformed', 'authorization header must be "Bearer <token>"');
  const principal = await authenticate(options, token);
  if (principal.instanceId !== options.instanceId()) throw invalidToken('AUTH-Instance', 'token is not valid for this instance');
  const missing = required.filter((scope) => !principal.scopes.has(scope));
  if (missing.length > 0) {
    throw apiError(Code.PermissionDenied, 'AUTH-Scope', `token lacks required scope: ${missing.join(' ')}`, {
      'www-authenticate': `Bearer error="insufficient_scope", scope="${required.join(' ')}"`,
    });
  }
  // docs/security.md 10.5: every call on every service, as ZITADEL's API wants its own project in
  // `aud`. The client's own id is in every token it gets; an application whose client id happens to
  // be the API audience (the issuer URL) must not get the API that way, without the API scope.
  const audience = principal.audience.filter((entry) => entry !== principal.clientId);
  if (!audience.includes(options.apiAudience)) throw invalidToken('AUTH-Audience', 'invalid audience');
  return principal;
}

async function authenticate(options: Pick<AuthOptions, 'authenticate' | 'log'>, token: string): Promise<Principal> {
  try {
    return await options.authenticate(token);
  } catch (error) {
    // A ConnectError is the authenticator's deliberate answer; an unreachable database or a full
    // hashing queue is not the token's fault (503, not 401); anything else means the token was not accepted.
    if (error instanceof ConnectError) throw error;
    const answer = publicError(error);
    if (answer.code === Code.Unavailable) throw answer;
    options.log.debug({ reason: error instanceof Error ? error.message : String(error) }, 'bearer token rejected');
    throw invalidToken('AUTH-InvalidToken', 'invalid or expired token');
  }
}

function invalidToken(id: string, message: string): ConnectError {
  return apiError(Code.Unauthenticated, id, message, { 'www-authenticate': 'Bearer error="invalid_token"' });
}

/** The authenticated caller; the interceptor guarantees it for every registered method. */
export function requirePrincipal(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (principal === undefined) throw new ConnectError('internal error', Code.Internal, undefined, undefined, new Error('no principal: authInterceptor is not installed'));
  return principal;
}
