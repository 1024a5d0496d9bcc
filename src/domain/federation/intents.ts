/**
 * Sign-ins at external identity providers, as ZITADEL's "IdP intents" (ZITADEL
 * `internal/api/idp/idp.go`, `internal/api/grpc/user/v2/intent.go`; docs/federation.md#the-intent-calls):
 * the one writer of `idp_intents`.
 *
 * - startIntent: where to send the browser (upstream.ts `startUpstream`), with the callback
 *   `{external URL}/idps/callback`. The `state` sent to the provider is random (256 bits) and only
 *   its SHA-256 is stored: the callback finds the intent by it. ZITADEL sends the intent id as the
 *   state; an id is guessable, a random state is not. The nonce and PKCE verifier are sealed with
 *   the master key in the row.
 * - completeIntent: the callback. It takes the intent for itself (a second callback with the same
 *   state finds it taken), exchanges the code, and redirects to the success URL with `id`, `token`
 *   (256 random bits, only their hash stored) and `user` when the upstream account is linked; or to
 *   the failure URL with `id`, `error` and `error_description` (the provider's name and a reason
 *   that is safe to show, never a token). Without a known state there is nowhere safe to redirect
 *   to: 400.
 * - consumeIntent: the result, once (ZITADEL records "consumed" on the session check; Gatehouse
 *   already on the first retrieval, so a leaked intent token is worth nothing after the login used
 *   it). The provider's tokens, sealed in the row, are cleared then; expired rows are pruned
 *   (server/jobs.ts).
 * - No events: an intent is sign-in state, like an authorization request, not a change of anything.
 */
import type { DB } from '../../store/database.ts';
import { claimStartedIdpIntent, consumeIdpIntent, findIdpIntent, findIdpIntentByState, finishIdpIntent, insertIdpIntent } from '../../store/idp-intents.ts';
import { findIdpLinkBySubject } from '../../store/idp-links.ts';
import { sha256, safeEqual, type MasterKey } from '../kernel/crypto.ts';
import { latestSequence, type ChangeDetails } from '../kernel/events.ts';
import { newId, randomToken } from '../kernel/ids.ts';
import { Refusal } from '../kernel/refusals.ts';
import { anyProvider, upstreamConfigOf, type Provider } from './providers.ts';
import { finishUpstream, startUpstream, UpstreamRefused, type UpstreamProfile } from './upstream.ts';

export type { UpstreamProfile } from './upstream.ts';

/** ZITADEL's `SystemDefaults.MaxIdPIntentLifetime` default (1h). */
export const INTENT_LIFETIME_SECONDS = 3600;
/** The redirect URI every provider is given: ZITADEL's (`/idps` handler, `/callback`). */
export const IDP_CALLBACK_PATH = '/idps/callback';

export interface IntentContext {
  db: DB;
  instanceId: string;
  /** GATEHOUSE_EXTERNAL_URL: the callback is `{externalUrl}/idps/callback`. */
  externalUrl: string;
  masterKey: MasterKey;
  /** GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks: boolean;
  /** The clock (tests). */
  now?: () => Date;
  /** Where a provider's refused answer is logged with its detail (never a token); none: not logged. */
  log?: { info(object: Record<string, unknown>, message: string): void };
}

export interface IntentStart {
  provider: Provider;
  /** Absolute; the callback redirects there with `?id=&token=(&user=)`. */
  successUrl: string;
  /** Absolute; the callback redirects there with `?id=&error=&error_description=`. */
  failureUrl: string;
  loginHint?: string;
  /** The sign-in request (authorization request) the intent belongs to, when the login UI starts it. */
  authRequestId?: string;
}

export interface SucceededIntent {
  intentId: string;
  instanceId: string;
  providerId: string;
  authRequestId: string | undefined;
  /** The upstream user id: the ID token's `sub`, or the OAuth user endpoint's id attribute. */
  subject: string;
  /** The upstream user name (`preferred_username`), when the provider names one. */
  userName: string | undefined;
  profile: UpstreamProfile;
  raw: Record<string, unknown>;
  amr: string[];
  /** The Gatehouse user linked to (provider, subject), if any. */
  linkedUserId: string | undefined;
  tokens: { accessToken: string; idToken?: string; refreshToken?: string };
}

/** The intent token does not fit the intent: ZITADEL's PermissionDenied `Errors.Intent.InvalidToken` (the API maps it so). */
export class IntentTokenRefused extends Refusal {
  constructor() {
    super('conflict', 'IDP-InvalidToken', 'the intent token is not valid for this intent');
  }
}

/** What the row keeps sealed until the callback. */
interface SealedRequest {
  nonce?: string;
  codeVerifier?: string;
}

/** What the row keeps sealed from the callback until the intent is used. */
interface SealedResult {
  subject: string;
  profile: UpstreamProfile;
  raw: Record<string, unknown>;
  amr: string[];
  tokens: SucceededIntent['tokens'];
}

function nowOf(ctx: IntentContext): Date {
  return ctx.now?.() ?? new Date();
}

function callbackUrl(ctx: IntentContext): string {
  return `${ctx.externalUrl}${IDP_CALLBACK_PATH}`;
}

function absoluteUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Refusal('invalid', 'IDP-UrlInvalid', 'must be an absolute URL', { field });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Refusal('invalid', 'IDP-UrlInvalid', 'must be an http or https URL', { field });
  if (value.length > 2048) throw new Refusal('invalid', 'IDP-UrlInvalid', 'must be at most 2048 characters', { field });
  return url.href;
}

/**
 * Starts a sign-in at the provider: the intent's id and the URL to send the browser to. A provider
 * that cannot be reached or is not configured correctly is refused (FailedPrecondition) with the
 * reason, before anything is stored.
 */
export async function startIntent(ctx: IntentContext, start: IntentStart): Promise<{ intentId: string; authUrl: string; details: ChangeDetails }> {
  const successUrl = absoluteUrl(start.successUrl, 'urls.successUrl');
  const failureUrl = absoluteUrl(start.failureUrl, 'urls.failureUrl');
  if (start.provider.state !== 'active') throw new Refusal('conflict', 'IDP-Inactive', `the identity provider "${start.provider.name}" is not active`);
  if (start.loginHint !== undefined && start.loginHint.length > 200) throw new Refusal('invalid', 'IDP-LoginHint', 'must be at most 200 characters', { field: 'urls.loginHint' });
  let started;
  try {
    started = await startUpstream(upstreamConfigOf(start.provider, ctx.masterKey), {
      redirectUri: callbackUrl(ctx),
      ...(start.loginHint !== undefined ? { loginHint: start.loginHint } : {}),
      fetchOptions: { allowPrivateNetworks: ctx.allowPrivateNetworks },
    });
  } catch (error) {
    if (error instanceof UpstreamRefused) throw new Refusal('conflict', 'IDP-Unavailable', `${start.provider.name}: ${error.reason}`);
    throw error;
  }
  const intentId = newId();
  const now = nowOf(ctx);
  const request: SealedRequest = { ...(started.nonce !== undefined ? { nonce: started.nonce } : {}), ...(started.codeVerifier !== undefined ? { codeVerifier: started.codeVerifier } : {}) };
  await insertIdpIntent(ctx.db, {
    id: intentId,
    instance_id: ctx.instanceId,
    idp_id: start.provider.id,
    state_hash: sha256(started.state),
    // Replaced by the hash of the token handed out on success: until then no token fits.
    token_hash: sha256(randomToken()),
    success_url: successUrl,
    failure_url: failureUrl,
    auth_request_id: start.authRequestId ?? null,
    sealed_request: ctx.masterKey.encrypt(JSON.stringify(request)),
    created_at: now,
    expires_at: new Date(now.getTime() + INTENT_LIFETIME_SECONDS * 1000),
  });
  return { intentId, authUrl: started.authorizationUrl, details: { sequence: await latestSequence(ctx.db), changeDate: now, resourceOwner: start.provider.orgId ?? ctx.instanceId } };
}

function withParameters(base: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/** The provider's `error`, reduced to RFC 6749's error characters (§4.1.2.1) so that it is safe to pass on. */
function safeUpstreamText(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const cleaned = value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '').slice(0, max);
  return cleaned === '' ? undefined : cleaned;
}

/** The /idps/callback: finishes the upstream sign-in, records the result, and says where the browser goes. */
export async function completeIntent(
  ctx: IntentContext,
  callback: { state?: string; code?: string; error?: string; errorDescription?: string; iss?: string },
): Promise<{ redirect: string } | { status: 400; problem: string }> {
  if (callback.state === undefined || callback.state === '') {
    return { status: 400, problem: 'The answer from the identity provider has no state parameter, so it cannot be matched to a sign-in. Start the sign-in again.' };
  }
  const row = await findIdpIntentByState(ctx.db, sha256(callback.state));
  if (row === undefined || row.instance_id !== ctx.instanceId) {
    return { status: 400, problem: 'The answer from the identity provider does not belong to any sign-in in progress (unknown state). Start the sign-in again.' };
  }
  let providerName = 'the identity provider';
  const fail = (error: string, description: string) => ({ redirect: withParameters(row.failure_url, { id: row.id, error, error_description: description }) });
  let provider: Provider;
  try {
    provider = await anyProvider(ctx.db, ctx.instanceId, row.idp_id);
    providerName = provider.name;
  } catch (error) {
    if (error instanceof Refusal) return fail('server_error', `${providerName}: the provider was removed`);
    throw error;
  }
  // Taken before anything else: of two callbacks with the same state, one goes on; the other ends here.
  if (!(await claimStartedIdpIntent(ctx.db, row.id))) {
    return fail('invalid_request', `${providerName}: this sign-in was finished already`);
  }
  if (row.expires_at.getTime() <= nowOf(ctx).getTime()) {
    await finishIdpIntent(ctx.db, row.id, { status: 'failed' });
    return fail('invalid_request', `${providerName}: the sign-in took too long; start it again`);
  }
  if (callback.error !== undefined && callback.error !== '') {
    await finishIdpIntent(ctx.db, row.id, { status: 'failed' });
    const code = safeUpstreamText(callback.error, 64) ?? 'an error';
    const description = safeUpstreamText(callback.errorDescription, 300);
    return fail(code, `${providerName} answered ${code}${description !== undefined ? `: ${description}` : ''}`);
  }
  if (callback.code === undefined || callback.code === '') {
    await finishIdpIntent(ctx.db, row.id, { status: 'failed' });
    return fail('invalid_request', `${providerName}: the answer has no code`);
  }
  const request = JSON.parse(ctx.masterKey.decrypt(row.sealed_request)) as SealedRequest;
  let finished;
  try {
    finished = await finishUpstream(upstreamConfigOf(provider, ctx.masterKey), {
      code: callback.code,
      redirectUri: callbackUrl(ctx),
      state: callback.state,
      iss: callback.iss === '' ? undefined : callback.iss,
      // The row was found by the state's hash: the comparison in finishUpstream holds by construction.
      expectedState: callback.state,
      ...request,
      fetchOptions: { allowPrivateNetworks: ctx.allowPrivateNetworks },
    });
  } catch (error) {
    await finishIdpIntent(ctx.db, row.id, { status: 'failed' });
    if (error instanceof UpstreamRefused) {
      ctx.log?.info({ idpId: provider.id, intentId: row.id, reason: error.reason, detail: error.detail }, 'the sign-in at an identity provider was refused');
      return fail('access_denied', `${providerName}: ${error.reason}`);
    }
    throw error;
  }
  const result: SealedResult = { subject: finished.subject, profile: finished.profile, raw: finished.raw, amr: finished.amr, tokens: finished.tokens };
  const token = randomToken();
  await finishIdpIntent(ctx.db, row.id, { status: 'succeeded', sealedResult: ctx.masterKey.encrypt(JSON.stringify(result)), tokenHash: sha256(token) });
  const link = await findIdpLinkBySubject(ctx.db, ctx.instanceId, provider.id, finished.subject);
  return { redirect: withParameters(row.success_url, { id: row.id, token, user: link?.user_id }) };
}

/**
 * The result of a succeeded intent, once: the first successful call consumes it (and forgets the
 * provider's tokens). Unknown, failed or used → 'conflict' (ZITADEL's FailedPrecondition
 * `Errors.Intent.NotSucceeded`); expired → 'conflict' (`Errors.Intent.Expired`); a token that does not
 * fit → IntentTokenRefused (PermissionDenied `Errors.Intent.InvalidToken`), checked first so that
 * without the token nothing about the intent is told.
 */
export async function consumeIntent(ctx: IntentContext, intentId: string, token: string): Promise<SucceededIntent> {
  const row = intentId === '' ? undefined : await findIdpIntent(ctx.db, ctx.instanceId, intentId);
  if (row === undefined) throw new Refusal('conflict', 'IDP-IntentNotSucceeded', 'the intent is unknown, has not succeeded or was used already');
  if (token === '' || !safeEqual(sha256(token), row.token_hash)) throw new IntentTokenRefused();
  if (row.status !== 'succeeded') throw new Refusal('conflict', 'IDP-IntentNotSucceeded', 'the intent has not succeeded or was used already');
  const now = nowOf(ctx);
  if (row.expires_at.getTime() <= now.getTime()) throw new Refusal('conflict', 'IDP-IntentExpired', 'the intent has expired');
  const sealed = await consumeIdpIntent(ctx.db, row.id, now);
  if (sealed === undefined) throw new Refusal('conflict', 'IDP-IntentNotSucceeded', 'the intent has not succeeded or was used already');
  const result = JSON.parse(ctx.masterKey.decrypt(sealed)) as SealedResult;
  const link = await findIdpLinkBySubject(ctx.db, ctx.instanceId, row.idp_id, result.subject);
  return {
    intentId: row.id,
    instanceId: row.instance_id,
    providerId: row.idp_id,
    authRequestId: row.auth_request_id ?? undefined,
    subject: result.subject,
    userName: result.profile.userName,
    profile: result.profile,
    raw: result.raw,
    amr: result.amr,
    linkedUserId: link?.user_id,
    tokens: result.tokens,
  };
}
