/**
 * A user as zitadel.user.v2 returns it (GetUserByID, ListUsers), from its row and its
 * organization's primary domain (docs/management-api.md#the-identity-model): the login name is
 * `userName@primaryDomain`, the only domain an organization has; the state is the one the API reports
 * (user-admin.ts effectiveState).
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Gender, AccessTokenType, UserState, type UserSchema } from '../../../gen/zitadel/user/v2/user_pb.js';
import type { Gender as StoredGender } from '../../domain/users/user-rules.ts';
import { effectiveState } from '../../domain/users/user-states.ts';
import type { UserState as StoredState } from '../../store/schema.ts';
import type { ListedUser } from '../../store/users.ts';
import { rowDetails } from '../management/details.ts';

const STATES: Record<StoredState, UserState> = {
  active: UserState.ACTIVE,
  inactive: UserState.INACTIVE,
  locked: UserState.LOCKED,
};

export const GENDERS: Record<StoredGender, Gender> = {
  female: Gender.FEMALE,
  male: Gender.MALE,
  diverse: Gender.DIVERSE,
};

function genderOf(value: string | null): Gender | undefined {
  return value !== null && value in GENDERS ? GENDERS[value as StoredGender] : undefined;
}

/** Sets only the optional fields that have a value. */
function present<T>(key: string, value: T | null | undefined): Record<string, T> {
  return value === null || value === undefined ? {} : { [key]: value };
}

export function userMessage(row: ListedUser, now = new Date()): MessageInitShape<typeof UserSchema> {
  const loginName = `${row.user_name}@${row.primary_domain}`;
  const state = STATES[effectiveState(row, now)];
  const common = { userId: row.id, state, username: row.user_name, loginNames: [loginName], preferredLoginName: loginName };
  const details = rowDetails(row, row.org_id);
  if (row.kind === 'machine') {
    return {
      ...common,
      details,
      type: {
        case: 'machine',
        value: {
          name: row.display_name ?? row.user_name,
          description: row.description ?? '',
          hasSecret: row.secret_hash !== null,
          accessTokenType: row.access_token_type === 'jwt' ? AccessTokenType.JWT : AccessTokenType.BEARER,
        },
      },
    };
  }
  return {
    ...common,
    details,
    type: {
      case: 'human',
      value: {
        ...common,
        profile: {
          givenName: row.given_name ?? '',
          familyName: row.family_name ?? '',
          ...present('nickName', row.nickname),
          ...present('displayName', row.display_name),
          ...present('preferredLanguage', row.preferred_language),
          ...present('gender', genderOf(row.gender)),
        },
        email: { email: row.email ?? '', isVerified: row.email_verified },
        phone: { phone: row.phone ?? '', isVerified: row.phone_verified },
        // Gatehouse has no forced password change (UpdateHumanUser and AddHumanUser refuse changeRequired).
        passwordChangeRequired: false,
      },
    },
  };
}
