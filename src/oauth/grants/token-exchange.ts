/**
 * grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; docs/token-exchange.md): a token
 * for a subject, exchanged for another with a different type, scope or audience, or for one a
 * second party uses on the subject's behalf. Behind the instance feature `oidcTokenExchange`.
 *
 * Three shapes, decided by the tokens presented:
 * - exchange: a subject token alone. The result keeps the subject and any `act` the subject token had.
 * - delegation: a subject token (access or ID token, proof the subject's authority reached this
 *   client) and an actor token. The result is the subject's, with `act` naming the actor and nesting
 *   the subject token's own `act` (RFC 8693 §4.1).
 * - impersonation: the actor names the subject (a user id, or a JWT the client signed). Needs the
 *   instance's impersonation switch and an impersonation role of the actor over the subject
 *   (IAM_ADMIN_IMPERSONATOR: any user; ORG_ADMIN_IMPERSONATOR: users of that org without
 *   instance-wide roles). Acting as oneself needs neither (a user may always act on itself).
 *
 * The authority of the result is the subject token, or the actor token for impersonation: scopes
 * beyond the user-claim scopes (openid, profile, email, phone, address; free only for subjects that
 * carry no scopes) must be carried by it, and the result joins its grant (revoking that family
 * revokes the result; a refresh token never outlives it) and its browser session (ending that
 * session ends the result). No result expires after a token presented for it, so exchanging again
 * renews nothing. The audience is a subset of the subject token's; the actor token's audience counts
 * too when the actor may impersonate the subject (RFC 8693 §2.1, invalid_target). Every exchange is
 * an audit event.
 */
import { rolesWithin } from '../../domain/users/permissions.ts';
import type { Gatehouse } from '../../context.ts';
import type { Application, User } from '../../domain/instance/directory.ts';
import { TOKEN_EXCHANGE } from '../../oidc/grant-types.ts';
import { appendEvent } from '../../domain/kernel/events.ts';
import { newId } from '../../domain/kernel/ids.ts';
import { activeTokenUser, actorChain } from '../../domain/tokens/token-user.ts';
import { familyEnd, storeRefreshToken, type RefreshFamily } from '../../domain/tokens/refresh-tokens.ts';
import { cappedLifetime } from '../../domain/tokens/tokens.ts';
import { issueIdToken } from '../id-token.ts';
import { InvalidGrant, InvalidRequest, InvalidScope, InvalidTarget } from '../errors.ts';
import { projectAccessRefusal } from '../project-access.ts';
import { optional, required } from '../../http/form.ts';
import { checkScopes, parseScope, type GrantedScopes } from '../scopes.ts';
import { checkActorType, namedSubject, namedSubjectId, subjectKind, verifyToken, type PresentedToken } from './exchange-tokens.ts';
import type { Grant, GrantContext, TokenResponse } from './grant.ts';
import { applicationOf, mintUserTokens, OFFLINE_ACCESS, refreshIssuer } from './user-tokens.ts';
import type { AccessTokenType, AuthMethod } from '../../oidc/vocabulary.ts';
import { ACCESS_TOKEN_TYPE, ID_TOKEN_TYPE, JWT_TOKEN_TYPE } from '../../oidc/vocabulary.ts';

export { TOKEN_EXCHANGE };

export const tokenExchange: Grant = {
  grantType: TOKEN_EXCHANGE,
  metricName: 'token_exchange',
  parameters: ['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'requested_token_type', 'scope', 'audience', 'resource'],
  repeatable: ['audience', 'resource'],
  clientAuth: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
  machines: false,
  async enabled(gh) {
    return (await gh.directory.instance(gh.instanceId)).features.oidcTokenExchange.enabled;
  },
  handle,
};

/** Scopes that ask for claims about the subject, not for access (see the module comment). */
const CLAIM_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'phone', 'address']);

/** Nested `act` claims beyond this depth are refused: a chain of actors, not an unbounded token. */
const MAX_ACTOR_DEPTH = 5;

/** requested_token_type → what is issued: an access token of a type, or an ID token. */
const REQUESTED: ReadonlyMap<string, AccessTokenType | 'id_token'> = new Map([
  [ACCESS_TOKEN_TYPE, 'opaque'],
  [JWT_TOKEN_TYPE, 'jwt'],
  [ID_TOKEN_TYPE, 'id_token'],
]);

type Shape = 'exchange' | 'delegation' | 'impersonation';

interface ExchangeRequest {
  subjectToken: string;
  subjectTokenType: string;
  actorToken: string | undefined;
  actorTokenType: string | undefined;
  requestedType: string;
  scopes: string[];
  audience: string[];
}

function parse({ params, lists }: GrantContext): ExchangeRequest {
  if (params.has('resource')) throw new InvalidRequest('resource is not supported; use audience');
  const actorToken = optional(params, 'actor_token');
  const actorTokenType = optional(params, 'actor_token_type');
  if (actorToken !== undefined && actorTokenType === undefined) throw new InvalidRequest('actor_token_type is required with actor_token');
  if (actorToken === undefined && actorTokenType !== undefined) throw new InvalidRequest('actor_token_type is given without actor_token');
  const audienceValues = lists.get('audience') ?? (params.has('audience') ? [params.get('audience')!] : []);
  return {
    subjectToken: required(params, 'subject_token'),
    subjectTokenType: required(params, 'subject_token_type'),
    actorToken,
    actorTokenType,
    requestedType: optional(params, 'requested_token_type') ?? ACCESS_TOKEN_TYPE,
    scopes: parseScope(required(params, 'scope')),
    // RFC 8693 §2.1 repeats the parameter; a space-separated list is read the same way
    audience: [...new Set(audienceValues.flatMap((value) => value.split(' ')).filter((a) => a !== ''))],
  };
}

/**
 * Whether `actor` holds an impersonation role over `subject` (the switch aside): instance-wide, or
 * in the subject's organization when every role the subject holds lies in organizations where the
 * actor impersonates too (an organization's impersonator must not become another organization's
 * owner by acting as a user who owns it).
 */
function hasImpersonationRole(actor: User, subject: User): boolean {
  if (actor.roles.some((grant) => grant.role === 'IAM_ADMIN_IMPERSONATOR')) return true;
  const orgs = new Set(actor.roles.filter((grant) => grant.role === 'ORG_ADMIN_IMPERSONATOR').map((grant) => grant.orgId || actor.orgId));
  return orgs.has(subject.orgId) && rolesWithin(subject, orgs);
}

/** Whether `actor` may act as `subject` of its own choosing: itself, or by role with the switch on. */
async function mayImpersonate(gh: Gatehouse, actor: User, subject: User): Promise<boolean> {
  if (actor.id === subject.id) return true;
  return (await gh.directory.instance(gh.instanceId)).enableImpersonation && hasImpersonationRole(actor, subject);
}

/** A user id as it can name a user: anything else names nobody (and never reaches the database). */
const USER_ID = /^[\x21-\x7e]{1,200}$/;

/** The named subject, which the actor must be allowed to impersonate. One answer for unknown and forbidden users. */
async function impersonated(gh: Gatehouse, userId: string, actor: User): Promise<User> {
  if (userId === actor.id) return actor;
  if (!(await gh.directory.instance(gh.instanceId)).enableImpersonation) throw new InvalidRequest('impersonation is not enabled on this instance');
  const user = USER_ID.test(userId) ? await gh.directory.user(userId) : undefined;
  if (!user || user.instanceId !== gh.instanceId || user.state !== 'active' || !hasImpersonationRole(actor, user)) {
    throw new InvalidRequest('the actor may not impersonate this subject');
  }
  return user;
}

/**
 * At every refresh of an exchanged family: token exchange is still on and still allowed for the
 * client, the actors are still active (and, for an impersonation, still allowed to impersonate the
 * subject).
 */
export async function stillExchangeable(gh: Gatehouse, app: Application, family: RefreshFamily): Promise<void> {
  if (!(await tokenExchange.enabled!(gh))) throw new InvalidGrant('token exchange is no longer enabled');
  if (!app.grantTypes.includes(TOKEN_EXCHANGE)) throw new InvalidGrant('the client may no longer exchange tokens');
  const subject = await activeTokenUser(gh.directory, gh.instanceId, { sub: family.subject, actor: family.actor });
  if (!subject) throw new InvalidGrant('the subject or an actor of the grant is not active');
  if (!family.impersonation) return;
  const actorId = actorChain(family.actor)?.[0];
  const actor = actorId === undefined ? undefined : await gh.directory.user(actorId);
  if (!actor || !(await mayImpersonate(gh, actor, subject))) throw new InvalidGrant('the actor may no longer impersonate the subject');
}

/** RFC 8693 §4.1: the current actor first, prior actors (the subject token's `act`) nested. */
function actorClaim(gh: Gatehouse, actor: PresentedToken | undefined, subject: PresentedToken): Record<string, unknown> | undefined {
  if (!actor) return subject.actor;
  const act = { iss: gh.config.externalUrl, sub: actor.user.id, ...(subject.actor ? { act: subject.actor } : {}) };
  if ((actorChain(act)?.length ?? Infinity) > MAX_ACTOR_DEPTH) throw new InvalidRequest('the chain of actors is too long');
  return act;
}

/** See the module comment: claim scopes are free for scope-less subjects; all else the authority must carry. */
function checkExchangeScopes(requested: string[], subject: PresentedToken, authority: PresentedToken): void {
  const carried = authority.scopes ?? [];
  for (const scope of requested) {
    if (CLAIM_SCOPES.has(scope) && subject.scopes === undefined) continue;
    if (!carried.includes(scope)) throw new InvalidScope(`scope ${scope} is not carried by the ${authority === subject ? 'subject' : 'actor'} token`);
  }
}

/** RFC 8693 §2.1 audience: a subset of what the presented tokens were meant for. */
function checkAudience(requested: string[], subject: PresentedToken, actorAudience: readonly string[]): string[] {
  if (requested.length === 0) return subject.audience.length > 0 ? subject.audience : [...actorAudience];
  const allowed = new Set([...subject.audience, ...actorAudience]);
  const foreign = requested.find((a) => !allowed.has(a));
  if (foreign !== undefined) throw new InvalidTarget(`audience ${foreign} is not an audience of the subject or actor token`);
  return requested;
}

interface Presented {
  subject: PresentedToken;
  actor: PresentedToken | undefined;
  shape: Shape;
  /** Whether the actor could have impersonated the subject (so its audience may be lent). */
  actorMayImpersonate: boolean;
}

/** The subject and actor tokens, verified in an order that tells nobody without an actor anything. */
async function presented(gh: Gatehouse, request: ExchangeRequest, client: { app: Application; method: AuthMethod }, endpointUrl: string): Promise<Presented> {
  const kind = subjectKind(gh, request.subjectTokenType);
  if (request.actorTokenType !== undefined) checkActorType(gh, request.actorTokenType);
  if (kind === 'named' && request.actorToken === undefined) {
    throw new InvalidRequest(`subject_token_type ${request.subjectTokenType} is only accepted with an actor_token`);
  }
  const actor = request.actorToken === undefined ? undefined : await verifyToken(gh, request.actorToken, request.actorTokenType!, client, 'actor_token');
  if (actor?.actor !== undefined) throw new InvalidRequest('actor_token was itself issued to an actor; present the token of the acting user');
  if (kind === 'token') {
    const subject = await verifyToken(gh, request.subjectToken, request.subjectTokenType, client, 'subject_token');
    const actorMayImpersonate = actor !== undefined && (await mayImpersonate(gh, actor.user, subject.user));
    return { subject, actor, shape: actor ? 'delegation' : 'exchange', actorMayImpersonate };
  }
  const userId = await namedSubjectId(gh, request.subjectToken, request.subjectTokenType, client.app, endpointUrl);
  const subject = namedSubject(request.subjectTokenType, await impersonated(gh, userId, actor!.user));
  return { subject, actor, shape: 'impersonation', actorMayImpersonate: true };
}

async function handle(ctx: GrantContext): Promise<TokenResponse> {
  const { gh, client, endpointUrl } = ctx;
  // parse
  const request = parse(ctx);
  const issue = REQUESTED.get(request.requestedType);
  if (issue === undefined) throw new InvalidRequest(`requested_token_type ${request.requestedType} is not supported`);
  const app = applicationOf(client, TOKEN_EXCHANGE);
  // validate
  const { subject, actor, shape, actorMayImpersonate } = await presented(gh, request, { app, method: client!.method }, endpointUrl);
  const authority = shape === 'impersonation' ? actor! : subject;
  // the tokens are the subject's at this client: the project's rules apply as at a sign-in
  const refusal = await projectAccessRefusal(gh, app, subject.user);
  if (refusal !== undefined) throw new InvalidGrant(refusal);
  const granted = await checkScopes(gh, request.scopes, app.orgId);
  checkExchangeScopes(granted.scopes, subject, authority);
  const audience = checkAudience(request.audience, subject, actor && actorMayImpersonate ? actor.audience : []);
  const act = actorClaim(gh, actor, subject);
  const sessionId = authority.sessionId;
  const authTime = authority.authTime ?? new Date();
  const amr = authority.amr ?? [];
  const grantId = authority.grantId ?? newId();
  // No exchange outlives what was presented for it: exchanging again and again renews nothing.
  const notAfter = earliest(subject.expiresAt, actor?.expiresAt);
  // offline_access yields a refresh token only for clients allowed the refresh_token grant,
  // never with an ID token (which cannot be refreshed), only within a live refresh family of the
  // authorizing sign-in and never past its end, and never from a token someone else already acts
  // with (its own refresh token, checked again at every use, is the only way to extend that)
  const wantsRefresh =
    granted.scopes.includes(OFFLINE_ACCESS) && app.grantTypes.includes('refresh_token') && issue !== 'id_token' && subject.actor === undefined;
  const familyEnds = wantsRefresh && authority.grantId ? await familyEnd(gh.db, authority.grantId) : undefined;
  const scopes = familyEnds ? granted : { ...granted, scopes: granted.scopes.filter((s) => s !== OFFLINE_ACCESS) };
  const acting = actorChain(act)?.[0];
  // issue, and record (the audit event does not wait for the tokens: one round trip less)
  const [response] = await Promise.all([
    issueExchanged(gh, { app, issue, subject: subject.user, scopes, audience, idTokenAudience: request.audience, act, sessionId, authTime, amr, grantId, familyEnds, notAfter, shape }),
    appendEvent(gh.db, {
      instanceId: gh.instanceId,
      aggregateId: subject.user.id,
      resourceOwner: subject.user.orgId,
      type: 'user.token.exchanged',
      // who acts: the actor of the result (also when a token someone already acted with is exchanged)
      creator: acting ?? subject.user.id,
      payload: {
        clientId: app.clientId,
        shape,
        subject: subject.user.id,
        ...(acting ? { actor: acting } : {}),
        subjectTokenType: request.subjectTokenType,
        ...(request.actorTokenType ? { actorTokenType: request.actorTokenType } : {}),
        issuedTokenType: request.requestedType,
        scopes: scopes.scopes,
        audience,
        grantId,
      },
      audit: true,
    }),
  ]);
  response.issued_token_type = request.requestedType;
  return response;
}

interface Issue {
  app: Application;
  issue: AccessTokenType | 'id_token';
  subject: User;
  scopes: GrantedScopes;
  audience: string[];
  idTokenAudience: string[];
  act: Record<string, unknown> | undefined;
  sessionId: string | undefined;
  authTime: Date;
  amr: string[];
  grantId: string;
  /** Set when a refresh token is issued: the end of its family. */
  familyEnds: Date | undefined;
  /** The access and ID token expire no later than this. */
  notAfter: Date | undefined;
  shape: Shape;
}

/** The tokens of an exchange: an ID token alone, or an access token with its refresh and ID tokens. */
async function issueExchanged(gh: Gatehouse, x: Issue): Promise<TokenResponse> {
  if (x.issue === 'id_token') {
    const now = Date.now();
    const idToken = await issueIdToken(
      gh,
      { user: x.subject, clientId: x.app.clientId, scopes: x.scopes.scopes, authTime: x.authTime, amr: x.amr, sessionId: x.sessionId, actor: x.act, audience: x.idTokenAudience, notAfter: x.notAfter },
      now,
    );
    const expiresIn = cappedLifetime(Math.floor(now / 1000), gh.config.lifetimes.idToken, x.notAfter);
    return { access_token: idToken, token_type: 'N_A', expires_in: expiresIn, scope: x.scopes.scopes.join(' ') };
  }
  const refreshToken = x.familyEnds
    ? await storeRefreshToken(gh.db, refreshIssuer(gh), {
        grantId: x.grantId,
        clientId: x.app.clientId,
        subject: x.subject.id,
        sessionId: x.sessionId,
        scopes: x.scopes.scopes,
        audience: x.audience,
        authTime: x.authTime,
        amr: x.amr,
        absoluteExpiresAt: x.familyEnds,
        actor: x.act,
        exchangedAs: x.issue,
        impersonation: x.shape === 'impersonation',
      })
    : undefined;
  return mintUserTokens(gh, {
    app: x.app,
    user: x.subject,
    granted: x.scopes,
    grantId: x.grantId,
    sessionId: x.sessionId,
    authTime: x.authTime,
    amr: x.amr,
    refreshToken,
    accessTokenType: x.issue,
    audience: x.audience,
    actor: x.act,
    idTokenAudience: x.idTokenAudience,
    notAfter: x.notAfter,
  });
}

function earliest(...dates: Array<Date | undefined>): Date | undefined {
  const times = dates.filter((d): d is Date => d !== undefined).map((d) => d.getTime());
  return times.length === 0 ? undefined : new Date(Math.min(...times));
}
