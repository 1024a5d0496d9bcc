/**
 * The authenticator-app factor (docs/decisions.md#the-authenticator-app): one TOTP factor per user
 * (RFC 6238: SHA-1, 6 digits, 30-second steps), added unverified, made ready by a first valid code,
 * then asked for by the login UI after the password. The secret (20 random bytes, base32 without
 * padding) is stored sealed with the master key. A code is accepted one step either side of now,
 * and never for a step at or before the last accepted one, so an accepted code cannot be replayed.
 *
 * Counting wrong codes towards the lockout is the caller's part (domain/lockout.ts), as it is for
 * passwords; these functions only say whether a code was valid.
 */
import { HOTP, Secret } from 'otpauth';
import type { DB } from '../../store/database.ts';
import {
  deleteOtpFactor,
  findOtpFactor,
  findOtpFactorState,
  findOtpFactorStateForUpdate,
  findReadyOtpFactorForUpdate,
  hasReadyOtpFactor,
  markOtpFactorReady,
  recordOtpStep,
  upsertUnverifiedOtpFactor,
} from '../../store/otp-factors.ts';
import { takeUserRowLock } from '../../store/users.ts';
import { safeEqual } from '../kernel/crypto.ts';
import { appendEvent, type ChangeDetails } from '../kernel/events.ts';
import { currentLockUnderRowLock } from '../sign-in/lockout.ts';
import type { Config } from '../../config/index.ts';
import type { MasterKey } from '../kernel/crypto.ts';

/** What the authenticator-app factor uses: the database, the sealing key, the issuer name of the otpauth URL. */
export interface OtpContext {
  db: DB;
  instanceId: string;
  masterKey: Pick<MasterKey, 'encrypt' | 'decrypt'>;
  config: Pick<Config, 'issuerName'>;
}

export const OTP_PERIOD_SECONDS = 30;
export const OTP_DIGITS = 6;
/** Steps accepted either side of the current one. */
export const OTP_WINDOW = 1;
const SECRET_BYTES = 20;
const CODE = /^\d{6}$/;

/** The user an OTP change is for: a human user of the directory. */
export interface OtpUser {
  id: string;
  orgId: string;
  /** userName@primaryDomain */
  loginName: string;
  /** Who makes the change, when not the user itself (an impersonator): the events' creator. */
  creator?: string | undefined;
}

export interface AddedOtp {
  url: string;
  secret: string;
  details: ChangeDetails & { creationDate: Date };
}

export type AddOtpResult = { kind: 'added'; otp: AddedOtp } | { kind: 'exists' };
export type VerifyOtpResult<R> =
  | { kind: 'verified'; details: ChangeDetails }
  | { kind: 'not_found' }
  | { kind: 'already_ready' }
  | { kind: 'locked'; until: Date }
  | { kind: 'invalid'; refusal: R };
export type RemoveOtpResult = { kind: 'removed'; details: ChangeDetails } | { kind: 'not_found' } | { kind: 'needs_otp_sign_in' };

/** RFC 8176 `amr` value of a sign-in that used the authenticator app. */
export const OTP_AMR = 'otp';

/**
 * `otpauth://totp/{issuer}:{loginName}?algorithm=SHA1&digits=6&issuer={issuer}&period=30&secret={secret}`
 * (docs/endpoints.md#authservice-the-authenticator-app): query keys in this order, label parts and
 * values URL-encoded.
 */
export function otpUrl(issuer: string, loginName: string, secret: string): string {
  const e = encodeURIComponent;
  return `otpauth://totp/${e(issuer)}:${e(loginName)}?algorithm=SHA1&digits=${OTP_DIGITS}&issuer=${e(issuer)}&period=${OTP_PERIOD_SECONDS}&secret=${e(secret)}`;
}

/** The 30-second time step of an instant. */
export function otpStep(now: Date): number {
  return Math.floor(now.getTime() / 1000 / OTP_PERIOD_SECONDS);
}

/** The step a code matched within the window; `replayed` when its only matches are steps already used. */
type CodeMatch = { step: number } | 'replayed' | undefined;

/**
 * The step `code` was generated for, within the window around `now` and after `lastStep`; `replayed`
 * when it matches a step at or before `lastStep` only (a right code, already used); undefined when it
 * matches none (wrong or expired).
 */
function matchCode(base32: string, code: string, now: Date, lastStep: number | null): CodeMatch {
  if (!CODE.test(code)) return undefined;
  const secret = Secret.fromBase32(base32);
  const current = otpStep(now);
  let found: number | undefined;
  let used = false;
  for (let step = current - OTP_WINDOW; step <= current + OTP_WINDOW; step++) {
    const expected = HOTP.generate({ secret, algorithm: 'SHA1', digits: OTP_DIGITS, counter: step });
    // Every candidate is compared (no early exit), in constant time.
    const equal = safeEqual(expected, code);
    if (equal && found === undefined && (lastStep === null || step > lastStep)) found = step;
    if (equal && lastStep !== null && step <= lastStep) used = true;
  }
  if (found !== undefined) return { step: found };
  return used ? 'replayed' : undefined;
}

function lastStepOf(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/**
 * Adds an unverified factor with a fresh secret, replacing an unverified one; `exists` when the
 * user has a ready factor. The user row is locked for the transaction, so concurrent adds for one
 * user run one after the other and leave exactly one factor.
 */
export async function addOtpFactor(ctx: OtpContext, user: OtpUser, now = new Date()): Promise<AddOtpResult> {
  const secret = new Secret({ size: SECRET_BYTES }).base32;
  return ctx.db.transaction().execute(async (trx) => {
    await takeUserRowLock(trx, user.id);
    if ((await findOtpFactorState(trx, user.id)) === 'ready') return { kind: 'exists' } as const;
    await upsertUnverifiedOtpFactor(trx, user.id, ctx.masterKey.encrypt(secret), now);
    const details = await appendEvent(trx, {
      instanceId: ctx.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.mfa.otp.added',
      creator: user.creator ?? user.id,
    });
    return { kind: 'added', otp: { url: otpUrl(ctx.config.issuerName, user.loginName, secret), secret, details: { ...details, creationDate: details.changeDate } } } as const;
  });
}

/**
 * Makes the unverified factor ready with a valid code. `locked` while the user is locked out (wrong
 * codes count towards it, see the caller); `invalid` for a wrong, expired or replayed code.
 */
export async function verifyOtpFactor<R>(
  ctx: OtpContext,
  user: OtpUser,
  code: string,
  now: Date,
  /** Counts a wrong code, in the transaction that holds the user's row lock (docs/security.md 10.3). */
  refuse: (trx: DB) => Promise<R>,
): Promise<VerifyOtpResult<R>> {
  return ctx.db.transaction().execute(async (trx): Promise<VerifyOtpResult<R>> => {
    const lockedUntil = await currentLockUnderRowLock(trx, user.id, now);
    const factor = await findOtpFactor(trx, user.id);
    if (!factor) return { kind: 'not_found' } as const;
    if (factor.state === 'ready') return { kind: 'already_ready' } as const;
    if (lockedUntil) return { kind: 'locked', until: lockedUntil } as const;
    const match = matchCode(ctx.masterKey.decrypt(factor.secret), code, now, lastStepOf(factor.last_step));
    if (typeof match !== 'object') return { kind: 'invalid', refusal: await refuse(trx) };
    await markOtpFactorReady(trx, user.id, match.step, now);
    const details = await appendEvent(trx, {
      instanceId: ctx.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.mfa.otp.verified',
      creator: user.creator ?? user.id,
    });
    return { kind: 'verified', details } as const;
  });
}

/**
 * Removes the user's factor. docs/security.md 10.4: a ready factor only when `usedFactor`, i.e. the
 * caller's token comes from a sign-in that used it (`amr` contains otp), so a token from before the
 * factor, or a stolen password alone, cannot take the second factor away. An unverified factor
 * protects nothing yet and goes with any token of the user. The row is locked, so a verification
 * running at the same time is seen.
 */
export async function removeOtpFactor(ctx: OtpContext, user: OtpUser, usedFactor: boolean): Promise<RemoveOtpResult> {
  return ctx.db.transaction().execute(async (trx) => {
    const state = await findOtpFactorStateForUpdate(trx, user.id);
    if (!state) return { kind: 'not_found' } as const;
    if (state === 'ready' && !usedFactor) return { kind: 'needs_otp_sign_in' } as const;
    await deleteOtpFactor(trx, user.id);
    const details = await appendEvent(trx, {
      instanceId: ctx.instanceId,
      aggregateId: user.id,
      resourceOwner: user.orgId,
      type: 'user.human.mfa.otp.removed',
      creator: user.creator ?? user.id,
    });
    return { kind: 'removed', details } as const;
  });
}

/** Whether the user has a verified factor (the login UI then asks for a code after the password). */
/**
 * Whether setting up an authenticator app for the user would add a credential: an add while a ready
 * one exists, or a verification with nothing pending, changes nothing (AlreadyExists, NotFound or
 * FailedPrecondition), and the answer may tell the user so without a fresh sign-in.
 */
export async function otpSetupWouldAdd(db: DB, userId: string, step: 'add' | 'verify'): Promise<boolean> {
  const state = await findOtpFactorState(db, userId);
  return step === 'add' ? state !== 'ready' : state === 'unverified';
}

export async function hasReadyOtp(db: DB, userId: string): Promise<boolean> {
  return hasReadyOtpFactor(db, userId);
}

/**
 * `replayed`: the code was right but its time step was already used (a second sign-in within the
 * same 30 seconds); it is refused and counted like a wrong code, and the user may be told to wait
 * for the next code.
 */
export type OtpCodeCheck<R> = { kind: 'valid' } | { kind: 'locked'; until: Date } | { kind: 'refused'; refusal: R; replayed: boolean };

/**
 * Checks a one-time password at sign-in against the user's ready factor and, when it is valid,
 * records its step so that it cannot be used again (the factor row is locked, so two concurrent uses
 * of one code see each other). docs/security.md 10.3: under the user's row lock, the lock is read
 * again and a wrong code is counted (`refuse`, in the same transaction) before the next check of
 * the same user may start, so parallel guesses cannot all pass the lockout check first.
 */
export async function checkOtpCode<R>(
  ctx: OtpContext,
  userId: string,
  code: string,
  now: Date,
  refuse: (trx: DB) => Promise<R>,
): Promise<OtpCodeCheck<R>> {
  return ctx.db.transaction().execute(async (trx): Promise<OtpCodeCheck<R>> => {
    const lockedUntil = await currentLockUnderRowLock(trx, userId, now);
    if (lockedUntil) return { kind: 'locked', until: lockedUntil };
    const factor = await findReadyOtpFactorForUpdate(trx, userId);
    const match = factor ? matchCode(ctx.masterKey.decrypt(factor.secret), code, now, lastStepOf(factor.last_step)) : undefined;
    if (typeof match !== 'object') return { kind: 'refused', refusal: await refuse(trx), replayed: match === 'replayed' };
    await recordOtpStep(trx, userId, match.step, now);
    return { kind: 'valid' };
  });
}

/**
 * Whether a browser session still proves what the user's account now requires: a session from before
 * the user added an authenticator app (amr without otp) cannot answer for that user any more. A
 * passkey sign-in (amr mfa: possession and user verification) satisfies it too
 * (docs/decisions.md#a-passkey-sign-in-is-two-factors).
 */
export async function sessionMeetsFactors(db: DB, session: { userId: string; amr: readonly string[] }): Promise<boolean> {
  return session.amr.includes(OTP_AMR) || session.amr.includes('mfa') || !(await hasReadyOtp(db, session.userId));
}
