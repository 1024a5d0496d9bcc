/**
 * What a user may be (docs/decisions.md#users): the value rules of user administration and the errors and
 * inputs they speak of. A user name without spaces (1–200), names of at most 200 characters, a
 * valid email address (email-address.ts), a phone number, a language tag, a password meeting the
 * password policy (password-policy.ts), a base32 authenticator secret. A refused value is a
 * UserInputError naming the request field.
 */
import type { Updateable } from 'kysely';
import { Secret } from 'otpauth';
import type { UsersTable } from '../../store/schema.ts';
import { MAX_EMAIL_LENGTH, isValidEmail } from './email-address.ts';
import { nameProblem } from '../kernel/names.ts';
import { passwordPolicyProblem } from '../credentials/password-policy.ts';
import { Refusal } from '../kernel/refusals.ts';

/** A value the rules refuse; `field` is the request's field path (`profile.givenName`). */
export class UserInputError extends Refusal {
  override name = 'UserInputError';
  override readonly field: string;
  readonly problem: string;
  constructor(field: string, problem: string) {
    super('invalid', 'USER-Invalid', `${field} ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

/** A user name or id another user has; the message names the field, `reason` is the rest. */
export class UserExists extends Refusal {
  override name = 'UserExists';
  override readonly field: string;
  readonly reason: string;
  constructor(field: string, reason: string) {
    super('exists', 'USER-AlreadyExists', reason, { field });
    this.field = field;
    this.reason = reason;
  }
}

/** A lifecycle change the user's state does not allow (FailedPrecondition). */
export class UserStateConflict extends Refusal {
  override name = 'UserStateConflict';
  constructor(message: string) {
    super('conflict', 'USER-State', message);
  }
}

export type Gender = 'female' | 'male' | 'diverse';

export interface ProfileInput {
  givenName: string;
  familyName: string;
  nickName?: string | undefined;
  /** "givenName familyName" when left out. */
  displayName?: string | undefined;
  preferredLanguage?: string | undefined;
  gender?: Gender | null | undefined;
}

/** How a new address gets verified: vouched for by the caller, or a code returned or mailed. */
export type EmailVerification = { kind: 'verified' } | { kind: 'return' } | { kind: 'send'; urlTemplate?: string | undefined };

export interface EmailInput {
  address: string;
  verification: EmailVerification;
  /** Where the email sits in the request (`email`, `human.email`): a refused link template is named under it. */
  field?: string | undefined;
}

export interface PhoneInput {
  number: string;
  verified: boolean;
}

export interface NewHuman {
  id?: string | undefined;
  /** The email address when left out. */
  userName?: string | undefined;
  profile: ProfileInput;
  email: EmailInput;
  phone?: PhoneInput | undefined;
  password?: string | undefined;
  totpSecret?: string | undefined;
}

export interface NewMachine {
  id?: string | undefined;
  /** The user id when left out. */
  userName?: string | undefined;
  name: string;
  description?: string | undefined;
}



const PHONE = /^\+?[0-9][0-9 ()./-]{2,30}$/;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,8}$/;
const BASE32 = /^[A-Z2-7]{16,128}=*$/;
const MAX_DESCRIPTION = 500;

export function check(field: string, problem: string | undefined): void {
  if (problem !== undefined) throw new UserInputError(field, problem);
}

export function userNameProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if ([...value].length > 200) return 'must be at most 200 characters';
  return /^[^\s\p{Cc}]+$/u.test(value) ? undefined : 'must not contain spaces or control characters';
}

export function optionalName(field: string, value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === '') return null;
  check(field, nameProblem(value));
  return value;
}

export function checkEmail(field: string, address: string): string {
  if (address === '') throw new UserInputError(field, 'is required');
  if (address.length > MAX_EMAIL_LENGTH || !isValidEmail(address)) throw new UserInputError(field, 'must be an email address like alice@example.com');
  return address;
}

export function checkPhone(field: string, number: string): string {
  const trimmed = number.trim();
  if (trimmed === '') throw new UserInputError(field, 'is required');
  check(field, PHONE.test(trimmed) ? undefined : 'must be a phone number like +41791234567');
  return trimmed;
}

export function checkLanguage(field: string, value: string | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === '') return null;
  check(field, LANGUAGE.test(value) ? undefined : 'must be a language tag like en or de-CH');
  return value;
}

/** The password policy, with what is missing spelled out. */
export function checkPassword(field: string, password: string): void {
  check(field, passwordPolicyProblem(password));
}

export function checkTotpSecret(field: string, secret: string): string {
  const normalized = secret.replace(/\s+/g, '').toUpperCase();
  check(field, BASE32.test(normalized) ? undefined : 'must be a base32 secret of at least 16 characters (80 bits)');
  // Stored as otp.ts stores its own secrets: base32 without padding.
  return Secret.fromBase32(normalized.replace(/=+$/, '')).base32;
}

export function descriptionProblem(value: string): string | undefined {
  if ([...value].length > MAX_DESCRIPTION) return `must be at most ${MAX_DESCRIPTION} characters`;
  // Line breaks and tabs are text; other control characters are not.
  return /[^\P{Cc}\n\t]/u.test(value) ? 'must not contain control characters' : undefined;
}

export type UserColumns = Updateable<UsersTable>;

/** The columns of a new profile; `given family` stands in for a missing display name. */
export function profileColumns(prefix: string, profile: ProfileInput): UserColumns {
  check(`${prefix}profile.givenName`, nameProblem(profile.givenName));
  check(`${prefix}profile.familyName`, nameProblem(profile.familyName));
  const displayName = optionalName(`${prefix}profile.displayName`, profile.displayName) ?? `${profile.givenName} ${profile.familyName}`;
  return {
    given_name: profile.givenName,
    family_name: profile.familyName,
    nickname: optionalName(`${prefix}profile.nickName`, profile.nickName) ?? null,
    display_name: displayName,
    preferred_language: checkLanguage(`${prefix}profile.preferredLanguage`, profile.preferredLanguage) ?? null,
    gender: profile.gender ?? null,
  };
}

