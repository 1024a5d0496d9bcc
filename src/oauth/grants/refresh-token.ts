/**
 * grant_type=refresh_token (RFC 6749 §6, OIDC Core §12; docs/decisions.md#refresh-tokens). Refresh
 * tokens rotate on every use: the presented one is marked used under a row lock and a new one of the
 * same family is issued in the same transaction. Presenting a used one again revokes the whole family
 * (RFC 9700 §4.14.2). `scope` may narrow the original grant for this access token, never widen it. A
 * family from a sign-in without the authenticator app stops once the user has a ready one, and every
 * refresh checks the project's access rules as a sign-in does; the new tokens carry the user's roles as
 * they are now.
 */
import type { Gatehouse } from '../../context.ts';
import { sha256 } from '../../domain/kernel/crypto.ts';
import type { Application } from '../../domain/instance/directory.ts';
import { REFRESH_TOKEN } from '../../oidc/grant-types.ts';
import { sessionMeetsFactors } from '../../domain/credentials/otp.ts';
import { activeTokenUser, actorChain } from '../../domain/tokens/token-user.ts';
import type { TokenRow } from '../../store/schema.ts';
import { findRefreshTokenByHash } from '../../store/tokens.ts';
import { familyOf, rotateRefreshToken, type RefreshFamily } from '../../domain/tokens/refresh-tokens.ts';
import { InvalidGrant, InvalidScope } from '../errors.ts';
import { optional, required } from '../../http/form.ts';
import { projectAccessRefusal } from '../project-access.ts';
import { checkScopes, parseScope } from '../scopes.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { stillExchangeable } from './token-exchange.ts';
import { activeSession, activeUser, applicationOf, mintUserTokens, refreshIssuer, revokeFamily } from './user-tokens.ts';

export const refreshToken: Grant = {
  grantType: REFRESH_TOKEN,
  metricName: 'refresh_token',
  parameters: ['refresh_token', 'scope'],
  clientAuth: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
  machines: false,
  handle,
};

async function reuseDetected(gh: Gatehouse, row: TokenRow): Promise<never> {
  await revokeFamily(gh, row.grant_id ?? row.id, row.absolute_expires_at ?? row.expires_at);
  throw new InvalidGrant('refresh token was already used; its family is revoked');
}

/** The stored refresh token, issued to this client and still usable. */
async function findRefreshToken(gh: Gatehouse, token: string, app: Application, now: Date): Promise<TokenRow> {
  const row = await findRefreshTokenByHash(gh.db, sha256(token));
  if (!row || row.instance_id !== gh.instanceId) throw new InvalidGrant('refresh token is unknown');
  if (row.client_id !== app.clientId) throw new InvalidGrant('refresh token was issued to another client');
  if (row.used_at) return reuseDetected(gh, row);
  if (row.revoked_at) throw new InvalidGrant('refresh token is revoked');
  if (row.expires_at <= now || (row.absolute_expires_at && row.absolute_expires_at <= now)) throw new InvalidGrant('refresh token has expired');
  return row;
}

/** RFC 6749 §6: the requested scope must not include any scope not originally granted. */
function narrowScopes(original: readonly string[], requested: string[] | undefined): string[] {
  if (requested === undefined) return [...original];
  const extra = requested.find((s) => !original.includes(s));
  if (extra !== undefined) throw new InvalidScope(`scope ${extra} was not granted originally`);
  return requested;
}

/**
 * docs/security.md 10.4: the sign-in that started the family must still prove what the account now
 * requires, as for browser sessions (sessionMeetsFactors): once an authenticator app is ready, a
 * family from a sign-in without it (amr without otp) refreshes no more. The sign-in is the
 * impersonator's for an impersonation (its amr is the actor's), else the subject's.
 */
async function signInMeetsFactors(gh: Gatehouse, family: RefreshFamily): Promise<void> {
  const signedIn = family.impersonation ? actorChain(family.actor)?.[0] : family.subject;
  if (signedIn === undefined || !(await sessionMeetsFactors(gh.db, { userId: signedIn, amr: family.amr }))) {
    throw new InvalidGrant('the sign-in of the grant did not use the second factor the user has now');
  }
}

async function handle({ gh, params, client }: GrantContext): Promise<TokenResponse> {
  // parse
  const token = required(params, 'refresh_token');
  const scope = optional(params, 'scope');
  const requested = scope === undefined ? undefined : parseScope(scope);
  const app = applicationOf(client, 'refresh_token');
  // validate
  const now = new Date();
  const row = await findRefreshToken(gh, token, app, now);
  const family = familyOf(row);
  const granted = await checkScopes(gh, narrowScopes(family.scopes, requested), app.orgId);
  const user = await activeUser(gh, family.subject);
  // ended with the user's earlier tokens (deactivated, locked, its password reset), or by an actor's
  if (!(await activeTokenUser(gh.directory, gh.instanceId, { sub: family.subject, actor: family.actor, issuedAt: row.created_at }))) {
    throw new InvalidGrant('the grant was ended: its user or an actor was deactivated, locked or had its password reset since');
  }
  // the project's rules, as at a sign-in: a role taken away or a switch turned on stops the family
  const refusal = await projectAccessRefusal(gh, app, user);
  if (refusal !== undefined) throw new InvalidGrant(refusal);
  if (family.exchangedAs) await stillExchangeable(gh, app, family);
  // an exchanged family's session is its authority's: the subject's, or the impersonator's
  await activeSession(gh, family.sessionId, family.exchangedAs ? undefined : user.id);
  await signInMeetsFactors(gh, family);
  // issue
  const rotation = await gh.db.transaction().execute((trx) => rotateRefreshToken(trx, refreshIssuer(gh), row, now));
  if (rotation.kind === 'reused') return reuseDetected(gh, row);
  if (rotation.kind === 'revoked') throw new InvalidGrant('refresh token is revoked');
  return mintUserTokens(gh, {
    app,
    user,
    granted,
    grantId: family.grantId,
    sessionId: family.sessionId,
    authTime: family.authTime,
    amr: family.amr,
    refreshToken: rotation.token,
    // a family from a token exchange keeps its type, audience and actor (RFC 8693 §4.1)
    ...(family.exchangedAs ? { accessTokenType: family.exchangedAs, audience: family.audience, actor: family.actor } : {}),
  });
}
