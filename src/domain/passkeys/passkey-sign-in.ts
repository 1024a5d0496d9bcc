/**
 * Signing in with a passkey (docs/passkeys.md#signing-in-with-a-passkey; docs/security.md 10.3, 10.11):
 * the challenge, and the verification of the browser's assertion. What the login UI calls; it keeps
 * the challenge id between the two steps.
 *
 * - Challenges live on the server, are used once (taken whatever comes of the assertion) and lapse
 *   after PASSKEY_CEREMONY_SECONDS. Username-less: no allowCredentials, any discoverable credential of
 *   Gatehouse's relying party. For a known user: that user's credentials, and only those are accepted.
 * - Every refusal has one outcome, `refused`, whatever the cause: an unknown, used or lapsed
 *   challenge, an unknown or removed credential, another user's credential, another relying party
 *   id or origin, a bad signature, no user verification, a counter that did not go up, a credential
 *   marked possibly cloned. Nothing tells whether a credential or a user exists.
 * - A counter that does not go up (when either is non-zero, WebAuthn §7.2 step 22) marks the
 *   credential possibly cloned (event `user.human.passwordless.token.cloned` and a warning): it
 *   signs in no more; the user removes it and registers a new one.
 * - When the user is known (the challenge's user, or the credential's owner), a refusal counts
 *   towards its lockout like a wrong one-time password (docs/security.md 10.3), under its row lock.
 *   A valid assertion of a locked-out user is `locked` (docs/security.md 10.11: only who proves the
 *   factor learns of the lock); of a deactivated or locked user `inactive`. Only a completed
 *   sign-in clears the count (lockout.ts clearLockout, called by the login UI when it finishes).
 * - Success is two factors in one (possession and user verification): `amr` ["user", "mfa"], and
 *   the assertion's time is the sign-in's auth_time.
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { DB } from '../../store/database.ts';
import {
  findPasskeyUser,
  findReadyCredential,
  findReadyCredentialForUpdate,
  insertPasskeyChallenge,
  listReadyCredentials,
  markPasskeyPossiblyCloned,
  recordPasskeyUse,
  takePasskeyChallenge,
  type PasskeyRow,
} from '../../store/passkeys.ts';
import { webauthnLibrary, type WebAuthnLibrary } from './webauthn-library.ts';
import { appendEvent } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { countFailedAttempt, countRefusalWhileLocked, currentLockUnderRowLock } from '../sign-in/lockout.ts';
import { authenticationResponse } from './passkey-credentials.ts';
import { PASSKEY_CEREMONY_SECONDS } from './passkey-party.ts';
import { enabledRelyingParty, type PasskeysContext } from './passkeys.ts';
import type { FailureThrottle } from '../sign-in/failure-throttle.ts';
import type { LockoutContext } from '../sign-in/lockout.ts';

/** What a passkey sign-in uses: the lockout's context and the failures per client address. */
export interface PasskeySignInContext extends LockoutContext, PasskeysContext {
  throttle: FailureThrottle;
}

/** ZITADEL's `amr` of a passkey sign-in: user verification and possession, two factors. */
export const PASSKEY_AMR: readonly string[] = ['user', 'mfa'];

export interface PasskeyChallenge {
  /** Keep it for finishPasskeySignIn. */
  challengeId: string;
  /** For navigator.credentials.get({ publicKey: options }). */
  options: PublicKeyCredentialRequestOptionsJSON;
  expiresAt: Date;
}

/**
 * A challenge for a passkey sign-in: username-less without `userId`, else for that user (its
 * credentials as allowCredentials). Throws PasskeysDisabled when passkeys are off.
 */
export async function startPasskeySignIn(ctx: PasskeySignInContext, input: { userId?: string | undefined } = {}, now = new Date()): Promise<PasskeyChallenge> {
  const party = enabledRelyingParty(ctx);
  const credentials = input.userId === undefined ? undefined : await listReadyCredentials(ctx.db, input.userId);
  const { generateAuthenticationOptions } = await webauthnLibrary();
  const options = await generateAuthenticationOptions({
    rpID: party.id,
    timeout: PASSKEY_CEREMONY_SECONDS * 1000,
    userVerification: 'required',
    ...(credentials === undefined ? {} : { allowCredentials: credentials.flatMap((c) => (c.credential_id === null ? [] : [{ id: c.credential_id, transports: c.transports }])) }),
  });
  const challengeId = newId();
  const expiresAt = new Date(now.getTime() + PASSKEY_CEREMONY_SECONDS * 1000);
  await insertPasskeyChallenge(ctx.db, { id: challengeId, instance_id: ctx.instanceId, challenge: options.challenge, user_id: input.userId ?? null, expires_at: expiresAt, created_at: now });
  return { challengeId, options, expiresAt };
}

export type PasskeySignIn =
  | { kind: 'signed_in'; userId: string; orgId: string; passkeyId: string; amr: string[]; authTime: Date }
  /** One answer for every refusal (see above). */
  | { kind: 'refused' }
  /** A valid passkey of a user locked out by failed attempts (docs/security.md 10.11). */
  | { kind: 'locked'; until: Date }
  /** A valid passkey of a deactivated or administratively locked user. */
  | { kind: 'inactive' }
  /** Too many failures from this client address: nothing was checked (docs/security.md 10.11). */
  | { kind: 'throttled'; retryAfterSeconds: number };

export interface FinishSignInInput {
  challengeId: string;
  /** The browser's PublicKeyCredential (assertion) in JSON form. */
  credential: unknown;
  /** The login UI's authorization request: failures count on it too. */
  requestId?: string | undefined;
  /** The client address failures are counted against (ctx.throttle). */
  address?: string | undefined;
}

/** Why an assertion was refused: for the log only, never for the caller. */
type Refusal = 'challenge' | 'malformed' | 'unknown_credential' | 'other_user' | 'user_handle' | 'cloned_before' | 'verification' | 'counter';

/** Verifies a passkey assertion against the challenge it answers. Throws PasskeysDisabled when off. */
export async function finishPasskeySignIn(ctx: PasskeySignInContext, input: FinishSignInInput, now = new Date()): Promise<PasskeySignIn> {
  const party = enabledRelyingParty(ctx);
  if (input.address !== undefined) {
    const wait = ctx.throttle.take(input.address, now.getTime());
    if (wait > 0) return { kind: 'throttled', retryAfterSeconds: wait };
  }
  const { verifyAuthenticationResponse } = await webauthnLibrary(); // loaded before any row is locked
  return ctx.db.transaction().execute(async (trx): Promise<PasskeySignIn> => {
    const challenge = await takePasskeyChallenge(trx, ctx.instanceId, input.challengeId);
    const response = authenticationResponse(input.credential);
    const presented = response === undefined ? undefined : await findReadyCredential(trx, ctx.instanceId, response.id);
    // The user the sign-in is for: named by the challenge, or the owner of the credential presented.
    // Its row is locked before the credential's, the order removal takes them in.
    const userId = challenge?.user_id ?? presented?.user_id;
    const lockedUntil = userId === undefined ? undefined : await currentLockUnderRowLock(trx, userId, now);
    const row = response === undefined || presented === undefined ? undefined : await findReadyCredentialForUpdate(trx, ctx.instanceId, response.id);
    const refuse = (reason: Refusal) => refusal(ctx, trx, { reason, userId, requestId: input.requestId, lockedUntil, passkeyId: row?.id }, now);

    if (challenge === undefined || challenge.expires_at <= now) return refuse('challenge');
    if (response === undefined) return refuse('malformed');
    if (row === undefined) return refuse('unknown_credential');
    if (row.user_id !== userId) return refuse('other_user');
    if (response.response.userHandle !== undefined && response.response.userHandle !== Buffer.from(row.user_id, 'utf8').toString('base64url')) return refuse('user_handle');
    if (row.possibly_cloned) return refuse('cloned_before');
    const counter = await verifiedCounter(ctx, verifyAuthenticationResponse, response, row, challenge.challenge, party);
    if (counter === undefined) return refuse('verification');
    const stored = Number(row.sign_count);
    if ((counter > 0 || stored > 0) && counter <= stored) {
      await markCloned(ctx, trx, row, { stored, presented: counter }, now);
      return refuse('counter');
    }

    // The assertion is valid: from here on the answer may tell about the user (it proved the factor).
    if (input.address !== undefined) ctx.throttle.succeeded(input.address, now.getTime());
    const user = await findPasskeyUser(trx, ctx.instanceId, row.user_id);
    if (user === undefined || user.kind !== 'human' || user.state !== 'active') return { kind: 'inactive' };
    if (lockedUntil !== undefined) return { kind: 'locked', until: lockedUntil };
    await recordPasskeyUse(trx, row.id, counter, now);
    return { kind: 'signed_in', userId: user.id, orgId: user.org_id, passkeyId: row.id, amr: [...PASSKEY_AMR], authTime: now };
  });
}

/**
 * The library's verification of signature, challenge, origin, relying party id and user
 * verification. The stored counter is left to the caller (given as 0 here), which must tell a
 * counter that did not go up from the other refusals. Undefined when refused.
 */
async function verifiedCounter(
  ctx: PasskeySignInContext,
  verifyAuthenticationResponse: WebAuthnLibrary['verifyAuthenticationResponse'],
  response: AuthenticationResponseJSON,
  row: PasskeyRow,
  challenge: string,
  party: { id: string; origin: string },
): Promise<number | undefined> {
  if (row.credential_id === null || row.public_key === null) return undefined;
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: { id: row.credential_id, publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')), counter: 0, transports: row.transports },
      requireUserVerification: true,
    });
    return result.verified ? result.authenticationInfo.newCounter : undefined;
  } catch (error) {
    ctx.log.debug({ event: 'passkey.assertion.refused', passkeyId: row.id, reason: error instanceof Error ? error.message : String(error) }, 'passkey assertion refused');
    return undefined;
  }
}

/** docs/passkeys.md#cloned-authenticators: the counter did not go up; the credential may have been copied. */
async function markCloned(ctx: PasskeySignInContext, trx: DB, row: PasskeyRow, counters: { stored: number; presented: number }, now: Date): Promise<void> {
  await markPasskeyPossiblyCloned(trx, row.id, now);
  const owner = await findPasskeyUser(trx, row.instance_id, row.user_id);
  await appendEvent(trx, {
    instanceId: row.instance_id,
    aggregateId: row.user_id,
    resourceOwner: owner?.org_id ?? '',
    type: 'user.human.passwordless.token.cloned',
    payload: { passkeyId: row.id, storedCounter: counters.stored, presentedCounter: counters.presented },
  });
  ctx.log.warn(
    { event: 'passkey.possibly_cloned', userId: row.user_id, passkeyId: row.id, ...counters },
    'passkey sign counter did not go up: the credential may have been cloned; it is refused from now on',
  );
}

/** A refused assertion: logged with its reason, counted towards the known user's lockout. */
async function refusal(
  ctx: PasskeySignInContext,
  trx: DB,
  context: { reason: Refusal; userId: string | undefined; requestId: string | undefined; lockedUntil: Date | undefined; passkeyId: string | undefined },
  now: Date,
): Promise<PasskeySignIn> {
  const { reason, userId, requestId, lockedUntil, passkeyId } = context;
  ctx.log.info({ event: 'passkey.refused', reason, userId, passkeyId, authRequestId: requestId }, 'passkey sign-in refused');
  if (userId !== undefined && lockedUntil !== undefined) {
    // As for passwords: failures during a lock do not extend it (counted on the request only).
    if (requestId !== undefined) await countRefusalWhileLocked(trx, requestId, lockedUntil);
  } else {
    const user = userId === undefined ? undefined : await findPasskeyUser(trx, ctx.instanceId, userId);
    // docs/security.md 10.3: like wrong one-time passwords.
    await countFailedAttempt(ctx, { requestId, user: user === undefined ? undefined : { id: user.id, orgId: user.org_id }, factor: 'passkey' }, now, trx);
  }
  return { kind: 'refused' };
}
