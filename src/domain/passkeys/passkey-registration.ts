/**
 * Passkey registration (docs/passkeys.md): a pending passkey with a fresh challenge, then the browser's
 * credential verified and stored.
 *
 * - A registration starts `pending` and lapses after PASSKEY_CEREMONY_SECONDS (5 minutes); a user
 *   has at most one pending registration (a new one replaces it). The options ask for a
 *   discoverable credential with user verification (both `required`) and ES256, EdDSA or RS256,
 *   and exclude the user's registered credentials. Attestation is `none`: Gatehouse trusts no
 *   authenticator maker more than another.
 * - Verifying the browser's credential stores its id, COSE public key, counter and transports, and
 *   the name the user gives it. A credential id registered already (to anyone) is refused.
 * - A registration code (passkey-codes.ts) stands in for the right to act on the user; whoever
 *   started a registration with one may finish it.
 */
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { DB } from '../../store/database.ts';
import { credentialIdTaken, findPasskeyForUpdate, findPendingPasskeyHolder, listReadyCredentials, markPasskeyReady, replacePendingPasskey } from '../../store/passkeys.ts';
import { isUniqueViolation, takeUserRowLock } from '../../store/users.ts';
import { webauthnLibrary, type WebAuthnLibrary } from './webauthn-library.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { newId } from '../kernel/ids.ts';
import { useRegistrationCode } from './passkey-codes.ts';
import { credentialTransports, registrationResponse, userHandleOf } from './passkey-credentials.ts';
import { PASSKEY_ALGORITHMS, PASSKEY_CEREMONY_SECONDS, relyingPartyName } from './passkey-party.ts';
import { enabledRelyingParty, type PasskeysContext, type PasskeyUser } from './passkeys.ts';
import type { Logger } from 'pino';

/** What a passkey registration uses: the passkeys' context and the log. */
export interface RegistrationContext extends PasskeysContext {
  log: Logger;
}

export type AuthenticatorAttachment = 'platform' | 'cross-platform';

export interface StartRegistrationInput {
  /** Ask the browser for a built-in or a roaming authenticator; any when absent. */
  attachment?: AuthenticatorAttachment | undefined;
  /** The events' creator. */
  creator: string;
  /**
   * A registration code (passkey-codes.ts) in place of a right to act on the user; `holder` (the
   * caller's user id) may then also finish the registration.
   */
  code?: { id: string; code: string; holder: string } | undefined;
}

export interface StartedRegistration {
  passkeyId: string;
  /** For navigator.credentials.create({ publicKey: options }). */
  options: PublicKeyCredentialCreationOptionsJSON;
  details: ChangeDetails;
  expiresAt: Date;
}

export type StartRegistrationResult = { kind: 'started'; registration: StartedRegistration } | { kind: 'invalid_code' };

/** Starts a registration: a pending passkey and the options for the browser. PasskeysDisabled when off. */
export async function startPasskeyRegistration(ctx: RegistrationContext, user: PasskeyUser, input: StartRegistrationInput, now = new Date()): Promise<StartRegistrationResult> {
  const party = enabledRelyingParty(ctx);
  const { generateRegistrationOptions } = await webauthnLibrary(); // loaded before the user's row is locked
  return ctx.db.transaction().execute(async (trx): Promise<StartRegistrationResult> => {
    await takeUserRowLock(trx, user.id);
    if (input.code !== undefined && (await useRegistrationCode(trx, user.id, input.code, now)) !== 'valid') return { kind: 'invalid_code' };
    const registered = await listReadyCredentials(trx, user.id);
    const options = await generateRegistrationOptions({
      rpName: relyingPartyName(user.orgName),
      rpID: party.id,
      userID: userHandleOf(user.id),
      userName: user.loginName,
      userDisplayName: user.displayName,
      timeout: PASSKEY_CEREMONY_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: registered.flatMap((c) => (c.credential_id === null ? [] : [{ id: c.credential_id, transports: c.transports }])),
      authenticatorSelection: {
        residentKey: 'required',
        userVerification: 'required',
        ...(input.attachment === undefined ? {} : { authenticatorAttachment: input.attachment }),
      },
      // credProps: the browser reports whether the credential is discoverable.
      extensions: { credProps: true },
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
    const passkeyId = newId();
    const expiresAt = new Date(now.getTime() + PASSKEY_CEREMONY_SECONDS * 1000);
    await replacePendingPasskey(trx, {
      id: passkeyId,
      instance_id: user.instanceId,
      user_id: user.id,
      rp_id: party.id,
      challenge: options.challenge,
      expires_at: expiresAt,
      code_holder: input.code?.holder ?? null,
      created_at: now,
    });
    const details = await appendEvent(trx, {
      instanceId: user.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.passwordless.token.added',
      creator: input.creator,
      payload: { passkeyId, rpId: party.id, ...(input.code ? { codeId: input.code.id } : {}) },
    });
    return { kind: 'started', registration: { passkeyId, options, details, expiresAt } };
  });
}

/**
 * Whether `holderId` started the pending registration `passkeyId` of `userId` with a registration
 * code: it may then finish it without a right to act on the user.
 */
export async function startedWithCodeBy(db: DB, userId: string, passkeyId: string, holderId: string): Promise<boolean> {
  const pending = await findPendingPasskeyHolder(db, passkeyId);
  return pending !== undefined && pending.user_id === userId && pending.code_holder !== null && pending.code_holder === holderId;
}

export type FinishRegistrationResult =
  | { kind: 'verified'; details: ChangeDetails }
  | { kind: 'not_found' }
  | { kind: 'expired' }
  | { kind: 'already_ready' }
  /** The credential is not a valid answer to this registration's options. */
  | { kind: 'invalid' }
  /** The credential is registered already. */
  | { kind: 'exists' };

export interface FinishRegistrationInput {
  passkeyId: string;
  /** The browser's PublicKeyCredential in JSON form. */
  credential: unknown;
  /** What the user calls the passkey (checked by the caller: 1–200 characters). */
  name: string;
  creator: string;
}

/** Verifies the browser's answer to a pending registration and makes the passkey ready. */
export async function finishPasskeyRegistration(ctx: RegistrationContext, user: { id: string; orgId: string; instanceId: string }, input: FinishRegistrationInput, now = new Date()): Promise<FinishRegistrationResult> {
  const party = enabledRelyingParty(ctx);
  const { verifyRegistrationResponse } = await webauthnLibrary(); // loaded before the row is locked
  try {
    return await ctx.db.transaction().execute(async (trx): Promise<FinishRegistrationResult> => {
      const row = await findPasskeyForUpdate(trx, user.id, input.passkeyId);
      if (row === undefined) return { kind: 'not_found' };
      if (row.state === 'ready') return { kind: 'already_ready' };
      if (row.challenge === null || row.expires_at === null || row.expires_at <= now) return { kind: 'expired' };
      const response = registrationResponse(input.credential);
      if (response === undefined) return { kind: 'invalid' };
      const verified = await verifyRegistration(ctx, verifyRegistrationResponse, response, row.challenge, party);
      if (verified === undefined) return { kind: 'invalid' };
      if (await credentialIdTaken(trx, verified.credentialId)) return { kind: 'exists' };
      await markPasskeyReady(
        trx,
        row.id,
        { credential_id: verified.credentialId, public_key: verified.publicKey, sign_count: verified.counter, transports: credentialTransports(response.response.transports), name: input.name },
        now,
      );
      const details = await appendEvent(trx, {
        instanceId: user.instanceId,
        aggregateId: user.id,
        resourceOwner: user.orgId,
        type: 'user.human.passwordless.token.verified',
        creator: input.creator,
        payload: { passkeyId: row.id, name: input.name },
      });
      return { kind: 'verified', details };
    });
  } catch (error) {
    // Two registrations of one credential at once: the second finds the first's row on commit.
    if (isUniqueViolation(error)) return { kind: 'exists' };
    throw error;
  }
}

/** The library's verification; undefined for anything it refuses (the reason goes to the debug log). */
async function verifyRegistration(
  ctx: RegistrationContext,
  verifyRegistrationResponse: WebAuthnLibrary['verifyRegistrationResponse'],
  response: RegistrationResponseJSON,
  challenge: string,
  party: { id: string; origin: string },
): Promise<{ credentialId: string; publicKey: string; counter: number } | undefined> {
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
    if (!result.verified) return undefined;
    const { credential } = result.registrationInfo;
    return { credentialId: credential.id, publicKey: Buffer.from(credential.publicKey).toString('base64url'), counter: credential.counter };
  } catch (error) {
    ctx.log.debug({ event: 'passkey.registration.refused', reason: error instanceof Error ? error.message : String(error) }, 'passkey registration refused');
    return undefined;
  }
}
