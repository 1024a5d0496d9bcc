/**
 * The request messages of the user calls as the domain's inputs (domain/users/user-admin.ts). Field paths in messages are the request's JSON
 * names (`profile.givenName`, `human.email.email`).
 *
 * Decisions where Gatehouse differs from ZITADEL:
 * - Phone numbers are stored, unverified unless an administrator says `isVerified`; Gatehouse sends
 *   no SMS and has no phone codes, so `sendCode` and `returnCode` are InvalidArgument.
 * - Gatehouse has no forced password change at sign-in: `changeRequired: true` is InvalidArgument.
 * - An email without a verification option gets a code by mail, as in ZITADEL.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { SetHumanEmail } from '../../../gen/zitadel/user/v2/email_pb.js';
import type { Password } from '../../../gen/zitadel/user/v2/password_pb.js';
import type { SetHumanPhone } from '../../../gen/zitadel/user/v2/phone_pb.js';
import { Gender, type SetHumanProfile } from '../../../gen/zitadel/user/v2/user_pb.js';
import type { AddHumanUserRequest } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { ProfilePatch } from '../../domain/users/user-admin.ts';
import { type EmailInput, type Gender as StoredGender, type NewHuman, type PhoneInput } from '../../domain/users/user-rules.ts';
import { parseUrlTemplate, TemplateError } from '../../mail/template.ts';
import { apiError } from '../errors.ts';

export function invalidField(field: string, problem: string): ConnectError {
  return apiError(Code.InvalidArgument, 'USER-Invalid', `${field} ${problem}`);
}

const GENDERS: Record<Gender, StoredGender | null> = {
  [Gender.UNSPECIFIED]: null,
  [Gender.FEMALE]: 'female',
  [Gender.MALE]: 'male',
  [Gender.DIVERSE]: 'diverse',
};

function gender(value: Gender | undefined, field: string): StoredGender | null | undefined {
  if (value === undefined) return undefined;
  if (!Object.hasOwn(GENDERS, value)) throw invalidField(field, `has an unknown value (${value})`);
  return GENDERS[value];
}

/** A profile as given; the domain checks the names. */
export function profileInput(profile: SetHumanProfile | undefined, field: string): ProfilePatch & { givenName: string; familyName: string } {
  if (profile === undefined) throw invalidField(field, 'is required');
  return {
    givenName: profile.givenName,
    familyName: profile.familyName,
    nickName: profile.nickName,
    displayName: profile.displayName,
    preferredLanguage: profile.preferredLanguage,
    gender: gender(profile.gender, `${field}.gender`),
  };
}

export function emailInput(email: SetHumanEmail | undefined, field: string): EmailInput {
  if (email === undefined) throw invalidField(field, 'is required');
  const how = email.verification;
  switch (how.case) {
    case 'isVerified':
      return { address: email.email, verification: how.value ? { kind: 'verified' } : { kind: 'send' }, field };
    case 'returnCode':
      return { address: email.email, verification: { kind: 'return' }, field };
    case 'sendCode': {
      const urlTemplate = how.value.urlTemplate;
      if (urlTemplate !== undefined) {
        try {
          parseUrlTemplate(urlTemplate);
        } catch (error) {
          if (error instanceof TemplateError) throw invalidField(`${field}.sendCode.urlTemplate`, `is invalid: ${error.message}`);
          throw error;
        }
      }
      return { address: email.email, verification: { kind: 'send', urlTemplate }, field };
    }
    case undefined:
      return { address: email.email, verification: { kind: 'send' }, field };
  }
}

/** A phone number; an empty message (no number, no option) when creating means no phone. */
export function phoneInput(phone: SetHumanPhone | undefined, field: string, options: { emptyIsNone: boolean }): PhoneInput | undefined {
  if (phone === undefined) return undefined;
  const how = phone.verification;
  if (options.emptyIsNone && phone.phone === '' && how.case === undefined) return undefined;
  if (how.case === 'sendCode') throw invalidField(`${field}.sendCode`, 'is not supported: Gatehouse sends no SMS; leave the verification out to store the number unverified, or set isVerified');
  if (how.case === 'returnCode') throw invalidField(`${field}.returnCode`, 'is not supported: Gatehouse has no phone verification codes; leave the verification out to store the number unverified, or set isVerified');
  return { number: phone.phone, verified: how.case === 'isVerified' && how.value };
}

/** The new password in clear text; the domain checks the policy. */
export function passwordInput(password: Password, field: string): string {
  if (password.changeRequired) throw invalidField(`${field}.changeRequired`, 'is not supported: Gatehouse has no forced password change at sign-in');
  if (password.password === '') throw invalidField(`${field}.password`, 'is required');
  return password.password;
}

/** What AddHumanUser asks for (also an organization's new admin, docs/decisions.md#organizations); `field` prefixes field names in errors. */
export function addHumanInput(req: AddHumanUserRequest, field = ''): NewHuman {
  return {
    id: req.userId,
    userName: req.username,
    profile: profileInput(req.profile, `${field}profile`),
    email: emailInput(req.email, `${field}email`),
    phone: phoneInput(req.phone, `${field}phone`, { emptyIsNone: true }),
    password: req.passwordType.case === 'password' ? passwordInput(req.passwordType.value, `${field}password`) : undefined,
    totpSecret: req.totpSecret,
  };
}
