/** Kysely table types, one interface per table of the migrations. */
import type { ColumnType, Generated, Insertable, JSONColumnType, Selectable } from 'kysely';
import type { AccessTokenType, AuthMethod } from '../oidc/vocabulary.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type TextArray = ColumnType<string[], string[] | undefined, string[]>;

export interface InstancesTable {
  id: string;
  name: string;
  default_org_id: string | null;
  enable_impersonation: Generated<boolean>;
  created_at: Timestamp;
}

export interface InstanceFeaturesTable {
  instance_id: string;
  name: string;
  enabled: boolean;
  changed_at: Timestamp;
}

export interface OrgsTable {
  id: string;
  instance_id: string;
  name: string;
  primary_domain: string;
  /** docs/security.md 10.12: self-registration into this org; null = the default (only the default org allows it). */
  allow_register: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  created_at: Timestamp;
  changed_at: Timestamp;
}

export type UserKind = 'human' | 'machine';
export type UserState = 'active' | 'locked' | 'inactive';

export interface Address {
  formatted?: string;
  street_address?: string;
  locality?: string;
  region?: string;
  postal_code?: string;
  country?: string;
}

export interface UsersTable {
  id: string;
  instance_id: string;
  org_id: string;
  kind: UserKind;
  user_name: string;
  state: Generated<UserState>;
  password_hash: string | null;
  email: string | null;
  email_verified: Generated<boolean>;
  phone: string | null;
  phone_verified: Generated<boolean>;
  given_name: string | null;
  family_name: string | null;
  nickname: string | null;
  display_name: string | null;
  preferred_language: string | null;
  gender: string | null;
  address: JSONColumnType<Address | null, string | null, string | null>;
  secret_hash: string | null;
  access_token_type: Generated<AccessTokenType>;
  /** Machine users: what the account is for (2026_11_24_0009). */
  description: ColumnType<string | null, string | null | undefined, string | null>;
  /** Access tokens issued before this no longer count (deactivated, locked; 2026_11_24_0009). */
  tokens_valid_after: NullableTimestamp;
  failed_attempts: Generated<number>;
  locked_until: NullableTimestamp;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** How many users an organization has: kept by triggers on `users` (2026_11_26_0018), read by the lists. */
export interface OrgUserCountsTable {
  org_id: ColumnType<string, never, never>;
  instance_id: ColumnType<string, never, never>;
  users: ColumnType<string, never, never>;
}

/** How many authorizations an organization has: kept by triggers on `authorizations` (2026_11_26_0019), read by the lists. */
export interface OrgAuthorizationCountsTable {
  org_id: ColumnType<string, never, never>;
  instance_id: ColumnType<string, never, never>;
  authorizations: ColumnType<string, never, never>;
}

export interface UserRolesTable {
  user_id: string;
  role: string;
  scope_org_id: Generated<string>;
}

export interface PublicKeysTable {
  id: string;
  public_key: string;
  expires_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface MachineKeysTable extends PublicKeysTable {
  user_id: string;
}

export interface PersonalAccessTokensTable {
  id: string;
  user_id: string;
  /** SHA-256 of the token, hex (the token itself is shown once). */
  token_hash: string;
  scopes: string[];
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface AppKeysTable extends PublicKeysTable {
  app_id: string;
}

export interface ProjectsTable {
  id: string;
  instance_id: string;
  org_id: string;
  name: string;
  /** Role claims in userinfo and introspection without a role scope (2026_11_24_0009). */
  role_assertion: Generated<boolean>;
  /** Sign-in refused to users without any of the project's roles (2026_11_24_0009). */
  authorization_required: Generated<boolean>;
  /** Sign-in refused to users of other organizations (2026_11_24_0009). */
  project_access_required: Generated<boolean>;
  /** ZITADEL's PrivateLabelingSetting, kept for the API (2026_11_24_0009). */
  private_labeling: Generated<number>;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** The roles a project defines (2026_11_24_0009). */
export interface ProjectRolesTable {
  project_id: string;
  role_key: string;
  display_name: Generated<string>;
  role_group: Generated<string>;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** Roles of a project given to a user (2026_11_24_0009): one row per user and project. */
export interface AuthorizationsTable {
  id: string;
  instance_id: string;
  /** The project's organization. */
  org_id: string;
  user_id: string;
  project_id: string;
  roles: TextArray;
  created_at: Timestamp;
  changed_at: Timestamp;
}

export type OidcAppType = 'web' | 'user_agent' | 'native';


export interface AppsTable {
  id: string;
  instance_id: string;
  org_id: string;
  project_id: string;
  name: string;
  kind: Generated<'oidc' | 'api'>;
  client_id: string;
  secret_hash: string | null;
  auth_method: AuthMethod;
  redirect_uris: TextArray;
  post_logout_redirect_uris: TextArray;
  response_types: TextArray;
  grant_types: TextArray;
  access_token_type: Generated<AccessTokenType>;
  id_token_userinfo_assertion: Generated<boolean>;
  dev_mode: Generated<boolean>;
  /** 2026_11_24_0009 */
  id_token_role_assertion: Generated<boolean>;
  access_token_role_assertion: Generated<boolean>;
  oidc_app_type: Generated<OidcAppType>;
  created_at: Timestamp;
  changed_at: Timestamp;
}

export interface EventsTable {
  sequence: ColumnType<string, never, never>;
  instance_id: string;
  aggregate_type: string;
  aggregate_id: string;
  resource_owner: string;
  event_type: string;
  creator: string | null;
  payload: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: Timestamp;
  /** A record of what happened that changes no cached state (2026_11_22_0006). */
  audit: Generated<boolean>;
}

export interface SigningKeysTable {
  id: string;
  alg: string;
  public_jwk: JSONColumnType<Record<string, unknown>, string, string>;
  private_key: string;
  created_at: Timestamp;
  sign_from: Timestamp;
  retired_at: NullableTimestamp;
  unpublish_at: NullableTimestamp;
}

export interface TokensTable {
  id: string;
  instance_id: string;
  kind: 'access' | 'refresh';
  token_hash: string;
  client_id: string;
  subject: string;
  scopes: TextArray;
  audience: TextArray;
  grant_id: string | null;
  session_id: string | null;
  actor: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  auth_time: NullableTimestamp;
  amr: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
  absolute_expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  used_at: NullableTimestamp;
  /** Refresh families started by a token exchange: the access token type they mint (2026_11_22_0006). */
  exchanged_as: ColumnType<AccessTokenType | null, AccessTokenType | null | undefined, AccessTokenType | null>;
  /** Refresh tokens of an impersonation: the actor's right is checked again at every refresh. */
  impersonation: Generated<boolean>;
}

export interface RevocationsTable {
  id: string;
  kind: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export interface UsedAssertionsTable {
  id: string;
  expires_at: Timestamp;
}

export interface UserSessionsTable {
  id: string;
  instance_id: string;
  browser_hash: string;
  user_id: string;
  auth_time: Timestamp;
  amr: ColumnType<string[], string[], string[]>;
  created_at: Timestamp;
  last_used_at: Timestamp;
  ended_at: NullableTimestamp;
}

export interface AuthRequestsTable {
  id: string;
  instance_id: string;
  browser_hash: string;
  client_id: string;
  redirect_uri: string;
  response_type: string;
  response_mode: string;
  scopes: ColumnType<string[], string[], string[]>;
  state: string | null;
  nonce: string | null;
  code_challenge: string | null;
  prompt: TextArray;
  max_age: number | null;
  login_hint: string | null;
  hint_user_id: string | null;
  ui_locales: TextArray;
  user_id: string | null;
  session_id: string | null;
  password_checked_at: NullableTimestamp;
  created_at: Timestamp;
  expires_at: Timestamp;
  code_hash: string | null;
  code_expires_at: NullableTimestamp;
  code_used_at: NullableTimestamp;
  grant_id: string | null;
  /** Login UI: the login name as typed (2026_11_22_0003). */
  login_name: string | null;
  failed_passwords: Generated<number>;
  /** Login UI: the user whose password was checked and who still owes an OTP code (2026_11_22_0004). */
  otp_pending_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Login UI: the first factor's amr values, space-separated, of a request that owes a second factor (2026_11_27_0024). */
  first_factor_amr: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The authenticator-app (TOTP) factor of a user (2026_11_22_0004). */
export interface OtpFactorsTable {
  user_id: string;
  /** The base32 secret, sealed with the master key (MasterKey.encrypt). */
  secret: string;
  state: 'unverified' | 'ready';
  /** The last accepted 30-second time step (replay protection); bigint, read as a string. */
  last_step: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** Contact email verification codes (2026_11_22_0005): one pending code per user. */
export interface EmailCodesTable {
  user_id: string;
  /** sha256(salt + code), hex. */
  code_hash: string;
  salt: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  attempts: Generated<number>;
  /** The code's id, which the default mailed link carries (2026_11_26_0015); null for older codes. */
  id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Wrong tries that did not present the code's id (2026_11_26_0015). */
  anonymous_attempts: Generated<number>;
}

/** Password reset codes (2026_11_24_0010): one pending code per user. */
export interface PasswordResetCodesTable {
  user_id: string;
  /** sha256(salt + code), hex. */
  code_hash: string;
  salt: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  attempts: Generated<number>;
}

/** Passkeys (2026_11_24_0011): WebAuthn credentials, pending until their registration is verified. */
export interface PasskeysTable {
  id: string;
  instance_id: string;
  user_id: string;
  state: 'pending' | 'ready';
  /** The relying party id the credential is bound to. */
  rp_id: string;
  /** base64url; null while pending. */
  credential_id: string | null;
  /** The COSE public key, base64url; null while pending. */
  public_key: string | null;
  /** The authenticator's signature counter (uint32); bigint, read as a string. */
  sign_count: ColumnType<string, string | number | undefined, string | number>;
  transports: TextArray;
  name: Generated<string>;
  possibly_cloned: Generated<boolean>;
  /** Pending registrations: the challenge (base64url), its expiry, and who started it with a code. */
  challenge: string | null;
  expires_at: NullableTimestamp;
  code_holder: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  changed_at: Timestamp;
  last_used_at: NullableTimestamp;
}

/** Challenges of passkey sign-ins (2026_11_24_0011): used once, short-lived. */
export interface PasskeyChallengesTable {
  id: string;
  instance_id: string;
  /** base64url */
  challenge: string;
  /** The user a sign-in is for, when the login name is known. */
  user_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** Codes that let someone register a passkey for a user (2026_11_24_0011): one pending per user. */
export interface PasskeyCodesTable {
  user_id: string;
  id: string;
  /** sha256(salt + code), hex. */
  code_hash: string;
  salt: string;
  expires_at: Timestamp;
  attempts: Generated<number>;
  created_at: Timestamp;
}

/**
 * The namespace of values that can name something in a token (2026_11_26_0013): one owner per
 * value, case-insensitively (`key` = lower(value)); rows are never removed.
 */
export interface IdentifiersTable {
  instance_id: string;
  key: string;
  value: string;
  owner_type: IdentifierOwnerType;
  owner_id: string;
  created_at: Timestamp;
}

export type IdentifierOwnerType = 'user' | 'project' | 'app';

/** Self-registrations of the last hour, for their limits (2026_11_26_0016). */
export interface RegistrationsTable {
  user_id: string;
  instance_id: string;
  /** The client address's limit key (an IPv4 address or an IPv6 /64). */
  address: string;
  created_at: Timestamp;
}

/** Mail waiting for delivery (2026_11_22_0005); the delivery worker owns the columns after insert. */
export interface OutboxTable {
  id: string;
  instance_id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: Timestamp;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  sent_at: NullableTimestamp;
  last_error: string | null;
  /** Whose code the mail carries, for the per-user limit (docs/security.md 10.2); null for rows before it. */
  user_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Branding (docs/branding-and-login-policy.md): a preview and an active row per owner. */
export type LabelPolicyState = 'preview' | 'active';
/** ThemeMode by name: the v1 and v2 APIs number it differently. */
export type ThemeModeName = 'unspecified' | 'auto' | 'light' | 'dark';

export interface LabelPoliciesTable {
  /** The instance's id for the instance's branding, else the organization's. */
  owner_id: string;
  state: LabelPolicyState;
  instance_id: string;
  org_id: string | null;
  primary_color: string;
  background_color: string;
  warn_color: string;
  font_color: string;
  primary_color_dark: string;
  background_color_dark: string;
  warn_color_dark: string;
  font_color_dark: string;
  hide_login_name_suffix: boolean;
  disable_watermark: boolean;
  theme_mode: ThemeModeName;
  /** Keys of `assets` rows of the same owner. */
  logo_key: string | null;
  logo_dark_key: string | null;
  icon_key: string | null;
  icon_dark_key: string | null;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** The login policy (docs/branding-and-login-policy.md): one row per owner; durations in seconds. */
export interface LoginPoliciesTable {
  owner_id: string;
  instance_id: string;
  org_id: string | null;
  allow_username_password: boolean;
  allow_register: boolean;
  allow_external_idp: boolean;
  force_mfa: boolean;
  force_mfa_local_only: boolean;
  passwordless_allowed: boolean;
  hide_password_reset: boolean;
  ignore_unknown_usernames: boolean;
  allow_domain_discovery: boolean;
  disable_login_with_email: boolean;
  disable_login_with_phone: boolean;
  default_redirect_uri: string;
  password_check_lifetime_s: number;
  external_login_check_lifetime_s: number;
  mfa_init_skip_lifetime_s: number;
  second_factor_check_lifetime_s: number;
  multi_factor_check_lifetime_s: number;
  second_factors: TextArray;
  multi_factors: TextArray;
  created_at: Timestamp;
  changed_at: Timestamp;
}

export type IdpKind = 'oidc' | 'oauth';
export type IdpState = 'active' | 'inactive';
export type AutoLinkingName = 'none' | 'username' | 'email';

/** External identity providers (docs/federation.md); `org_id` null for the instance's. */
export interface IdentityProvidersTable {
  id: string;
  instance_id: string;
  org_id: string | null;
  kind: IdpKind;
  name: string;
  state: Generated<IdpState>;
  client_id: string;
  /** Sealed with the master key. */
  client_secret: string;
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  user_endpoint: string | null;
  scopes: TextArray;
  id_attribute: string | null;
  id_token_mapping: boolean;
  use_pkce: boolean;
  is_linking_allowed: boolean;
  is_creation_allowed: boolean;
  is_auto_creation: boolean;
  is_auto_update: boolean;
  auto_linking: AutoLinkingName;
  created_at: Timestamp;
  changed_at: Timestamp;
}

/** The providers a login policy offers, by the policy's owner (the instance's or an organization's id). */
export interface LoginPolicyIdpsTable {
  owner_id: string;
  instance_id: string;
  org_id: string | null;
  idp_id: string;
  created_at: Timestamp;
}

/** A user's account at an external provider. */
export interface IdpLinksTable {
  instance_id: string;
  idp_id: string;
  user_id: string;
  external_user_id: string;
  external_user_name: Generated<string>;
  created_at: Timestamp;
}

export type IdpIntentStatus = 'started' | 'exchanging' | 'succeeded' | 'failed' | 'consumed';

/** A sign-in at an external provider in progress (docs/federation.md#the-intent-calls). */
export interface IdpIntentsTable {
  id: string;
  instance_id: string;
  idp_id: string;
  /** SHA-256 (hex) of the `state` sent to the provider. */
  state_hash: string;
  /** SHA-256 (hex) of the intent token. */
  token_hash: string;
  status: Generated<IdpIntentStatus>;
  success_url: string;
  failure_url: string;
  auth_request_id: string | null;
  /** Sealed with the master key: nonce and PKCE verifier. */
  sealed_request: string;
  /** Sealed with the master key: the provider's answer and tokens; null until it succeeded and after it was used. */
  sealed_result: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** Uploaded images, served publicly at /assets/v1/{owner_id}/{key}. */
export interface AssetsTable {
  owner_id: string;
  key: string;
  instance_id: string;
  content_type: string;
  data: Uint8Array;
  /** The ETag. */
  hash: string;
  created_at: Timestamp;
}

export interface Database {
  instances: InstancesTable;
  instance_features: InstanceFeaturesTable;
  orgs: OrgsTable;
  users: UsersTable;
  org_user_counts: OrgUserCountsTable;
  org_authorization_counts: OrgAuthorizationCountsTable;
  user_roles: UserRolesTable;
  machine_keys: MachineKeysTable;
  personal_access_tokens: PersonalAccessTokensTable;
  projects: ProjectsTable;
  project_roles: ProjectRolesTable;
  authorizations: AuthorizationsTable;
  apps: AppsTable;
  app_keys: AppKeysTable;
  events: EventsTable;
  signing_keys: SigningKeysTable;
  tokens: TokensTable;
  revocations: RevocationsTable;
  used_assertions: UsedAssertionsTable;
  user_sessions: UserSessionsTable;
  auth_requests: AuthRequestsTable;
  otp_factors: OtpFactorsTable;
  email_codes: EmailCodesTable;
  password_reset_codes: PasswordResetCodesTable;
  outbox: OutboxTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  passkey_codes: PasskeyCodesTable;
  identifiers: IdentifiersTable;
  registrations: RegistrationsTable;
  label_policies: LabelPoliciesTable;
  login_policies: LoginPoliciesTable;
  assets: AssetsTable;
  identity_providers: IdentityProvidersTable;
  login_policy_idps: LoginPolicyIdpsTable;
  idp_links: IdpLinksTable;
  idp_intents: IdpIntentsTable;
}

export type UserRow = Selectable<UsersTable>;
export type AppRow = Selectable<AppsTable>;
export type OrgRow = Selectable<OrgsTable>;
export type TokenRow = Selectable<TokensTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type NewEvent = Insertable<EventsTable>;
export type UserSessionRow = Selectable<UserSessionsTable>;
export type AuthRequestRow = Selectable<AuthRequestsTable>;
