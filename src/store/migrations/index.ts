/** The ordered list of migrations. Add a new file here; never edit a released one. */
import type { Migration } from 'kysely/migration';
import * as identity from './2026_11_22_0001_identity.ts';
import * as browserSignIn from './2026_11_22_0002_browser_sign_in.ts';
import * as loginUi from './2026_11_22_0003_login_ui.ts';
import * as otp from './2026_11_22_0004_otp.ts';
import * as email from './2026_11_22_0005_email.ts';
import * as tokenExchange from './2026_11_22_0006_token_exchange.ts';
import * as registration from './2026_11_23_0007_registration.ts';
import * as mailLimits from './2026_11_23_0008_mail_limits.ts';
import * as management from './2026_11_24_0009_management.ts';
import * as passwordReset from './2026_11_24_0010_password_reset.ts';
import * as passkeys from './2026_11_24_0011_passkeys.ts';
import * as tokenFamilyIndexes from './2026_11_24_0012_token_family_indexes.ts';
import * as identifiers from './2026_11_26_0013_identifiers.ts';
import * as masterKeyCheck from './2026_11_26_0014_master_key_check.ts';
import * as codeIds from './2026_11_26_0015_code_ids.ts';
import * as registrationLimits from './2026_11_26_0016_registration_limits.ts';
import * as emailIndex from './2026_11_26_0017_email_index.ts';
import * as userLists from './2026_11_26_0018_user_lists.ts';
import * as authorizationLists from './2026_11_26_0019_authorization_lists.ts';
import * as personalAccessTokens from './2026_11_26_0020_personal_access_tokens.ts';
import * as policies from './2026_11_26_0021_policies.ts';
import * as identityProviders from './2026_11_26_0022_identity_providers.ts';
import * as idpIntents from './2026_11_26_0023_idp_intents.ts';
import * as firstFactor from './2026_11_27_0024_first_factor.ts';
import * as tokenHashIndex from './2026_11_27_0025_token_hash_index.ts';

export const migrations: Record<string, Migration> = {
  '2026_11_22_0001_identity': identity,
  '2026_11_22_0002_browser_sign_in': browserSignIn,
  '2026_11_22_0003_login_ui': loginUi,
  '2026_11_22_0004_otp': otp,
  '2026_11_22_0005_email': email,
  '2026_11_22_0006_token_exchange': tokenExchange,
  '2026_11_23_0007_registration': registration,
  '2026_11_23_0008_mail_limits': mailLimits,
  '2026_11_24_0009_management': management,
  '2026_11_24_0010_password_reset': passwordReset,
  '2026_11_24_0011_passkeys': passkeys,
  '2026_11_24_0012_token_family_indexes': tokenFamilyIndexes,
  '2026_11_26_0013_identifiers': identifiers,
  '2026_11_26_0014_master_key_check': masterKeyCheck,
  '2026_11_26_0015_code_ids': codeIds,
  '2026_11_26_0016_registration_limits': registrationLimits,
  '2026_11_26_0017_email_index': emailIndex,
  '2026_11_26_0018_user_lists': userLists,
  '2026_11_26_0019_authorization_lists': authorizationLists,
  '2026_11_26_0020_personal_access_tokens': personalAccessTokens,
  '2026_11_26_0021_policies': policies,
  '2026_11_26_0022_identity_providers': identityProviders,
  '2026_11_26_0023_idp_intents': idpIntents,
  '2026_11_27_0024_first_factor': firstFactor,
  '2026_11_27_0025_token_hash_index': tokenHashIndex,
};
