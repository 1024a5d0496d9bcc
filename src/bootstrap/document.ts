/**
 * The bootstrap document's vocabulary and types (docs/bootstrap.md#the-document), as validation produces
 * them: every spec carries its path in the document so later errors can name it.
 */
import type { FeatureName } from '../domain/instance/features.ts';
import type { ProviderInput } from '../domain/federation/providers.ts';
import type { ColourField, ImageFile, ImageKind, LoginPolicy } from '../domain/instance/policies.ts';
import type { ThemeModeName } from '../store/schema.ts';
import { APP_GRANT_TYPES, type AppGrantType } from '../oidc/grant-types.ts';
import type { Address, OidcAppType } from '../store/schema.ts';
import type { AccessTokenType, AuthMethod, ResponseType } from '../oidc/vocabulary.ts';

export const ROLES = ['IAM_OWNER', 'ORG_OWNER', 'IAM_ADMIN_IMPERSONATOR', 'ORG_ADMIN_IMPERSONATOR'] as const;
export type Role = (typeof ROLES)[number];
/**
 * Roles that apply to the organization they are granted in; the others are instance-wide
 * (docs/management-api.md#the-identity-model).
 */
export const ORG_ROLES: ReadonlySet<Role> = new Set(['ORG_OWNER', 'ORG_ADMIN_IMPERSONATOR']);

/** The grant types an application may be registered for (one list, domain/grant-types.ts). */
export const GRANT_TYPES = APP_GRANT_TYPES;
export type GrantType = AppGrantType;
export const APP_TYPES = ['oidc', 'api'] as const;
/** What kind of OIDC client: native applications may use private-use schemes and loopback URIs of any port. */
export const OIDC_APP_TYPES = ['web', 'user_agent', 'native'] as const satisfies readonly OidcAppType[];
export const GENDERS = ['female', 'male', 'diverse'] as const;
export const USER_STATES = ['active', 'inactive'] as const;

export interface PublicKeySpec {
  path: string;
  keyId: string;
  /** The key as SPKI PEM, normalized (what is stored and compared). */
  pem: string;
  expiresAt: Date | null;
}

/**
 * A human user. Users also change their own data (email, phone, password) through the API and the
 * login UI, so a field left out of the file is left as it is; `null` clears a field.
 */
export interface HumanSpec {
  path: string;
  id: string | undefined;
  userName: string;
  password: string | undefined;
  email: string | null | undefined;
  emailVerified: boolean | undefined;
  phone: string | null | undefined;
  phoneVerified: boolean | undefined;
  givenName: string | null | undefined;
  familyName: string | null | undefined;
  nickname: string | null | undefined;
  displayName: string | null | undefined;
  preferredLanguage: string | null | undefined;
  gender: (typeof GENDERS)[number] | null | undefined;
  address: Address | null | undefined;
  state: (typeof USER_STATES)[number] | undefined;
  /** The complete set of the user's roles when given. */
  roles: Role[] | undefined;
  /** Project roles given to the user (docs/bootstrap.md#authorizations); authorizations for projects not listed are kept. */
  authorizations: AuthorizationSpec[];
}

/** Roles of a project of the same organization given to a user: the file owns the set for that project. */
export interface AuthorizationSpec {
  path: string;
  /** The project's id or name. */
  project: string;
  roles: string[];
}

/** A role a project defines; roles not listed in the file (added through the API) are kept. */
export interface ProjectRoleSpec {
  path: string;
  key: string;
  displayName: string;
  group: string;
}

/** A machine user: owned by the file, so what is left out takes its default. */
export interface MachineSpec {
  path: string;
  id: string | undefined;
  userName: string;
  secret: string | undefined;
  accessTokenType: AccessTokenType;
  roles: Role[];
  /** Added or updated by keyId; keys not listed (e.g. made by `machine-key create`) are kept. */
  publicKeys: PublicKeySpec[];
  /** Personal access tokens the file keeps in files; tokens made otherwise are kept. */
  pats: PatSpec[];
  authorizations: AuthorizationSpec[];
}

/**
 * A personal access token of a machine user, kept in a file (docs/bootstrap.md#personal-access-tokens):
 * made when the file does not hold a live token of this user with this expiry, else left alone.
 */
export interface PatSpec {
  path: string;
  expirationDate: Date;
  /** Absolute: resolved against the bootstrap file's folder. */
  writeTo: string;
}

export interface AppSpec {
  path: string;
  id: string | undefined;
  name: string;
  clientId: string;
  type: 'oidc' | 'api';
  appType: OidcAppType;
  clientSecret: string | undefined;
  authMethod: AuthMethod;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  responseTypes: ResponseType[];
  grantTypes: GrantType[];
  accessTokenType: AccessTokenType;
  idTokenUserinfoAssertion: boolean;
  idTokenRoleAssertion: boolean;
  accessTokenRoleAssertion: boolean;
  devMode: boolean;
  publicKeys: PublicKeySpec[];
}

export interface ProjectSpec {
  path: string;
  id: string | undefined;
  name: string;
  roles: ProjectRoleSpec[];
  roleAssertion: boolean;
  authorizationRequired: boolean;
  projectAccessRequired: boolean;
  apps: AppSpec[];
}

/**
 * Branding (docs/bootstrap.md#branding-and-login-policy): the file declares the active branding of
 * the instance or of an organization; what it leaves out takes the default (for an organization, the
 * instance's), and an image left out is removed.
 */
export interface BrandingSpec {
  path: string;
  colours: Partial<Record<ColourField, string>>;
  hideLoginNameSuffix: boolean | undefined;
  disableWatermark: boolean | undefined;
  themeMode: ThemeModeName | undefined;
  /** Read and checked while validating: paths relative to the bootstrap file. */
  images: Partial<Record<ImageKind, ImageFile>>;
}

/** A login policy: what the file leaves out takes the default (for an organization, the instance's). */
export interface LoginPolicySpec {
  path: string;
  values: Partial<LoginPolicy>;
  /** The providers it offers, by name or id (docs/federation.md); left out, the list is not managed. */
  idps: string[] | undefined;
}

/**
 * An external identity provider (docs/bootstrap.md#identity-providers), matched by name among its
 * owner's: the fields of the Add requests; `clientSecret` is required when it is created.
 */
export interface IdentityProviderSpec {
  path: string;
  input: ProviderInput;
}

export interface OrgSpec {
  path: string;
  id: string | undefined;
  name: string;
  /** Lowercased. */
  domain: string;
  /**
   * docs/security.md 10.12: whether self-registration may create users here. Left out: the default
   * (allowed for the instance's default organization only), so removing the key from the file
   * restores it.
   */
  allowRegister: boolean | undefined;
  /** The organization's own branding and login policy; left out, the file does not manage them. */
  branding: BrandingSpec | undefined;
  loginPolicy: LoginPolicySpec | undefined;
  /** The organization's own identity providers. */
  identityProviders: IdentityProviderSpec[];
  users: HumanSpec[];
  machines: MachineSpec[];
  projects: ProjectSpec[];
}

export interface BootstrapDocument {
  features: Partial<Record<FeatureName, boolean>>;
  security: { enableImpersonation: boolean | undefined };
  /** The instance's branding and login policy, the defaults of every organization. */
  branding: BrandingSpec | undefined;
  loginPolicy: LoginPolicySpec | undefined;
  /** The instance's identity providers, which every organization may offer. */
  identityProviders: IdentityProviderSpec[];
  orgs: OrgSpec[];
}

/** A validated document and the file it came from (named in errors found while applying it). */
export interface BootstrapFile {
  file: string;
  document: BootstrapDocument;
}
