/**
 * Read-through caches of the records the hot endpoints need on every request: applications by client
 * id, machine users by user name, users by id, instance settings. Every change appends an event; the
 * change watcher (server/jobs.ts) clears these caches when the change mark moves (domain/events.ts),
 * in this process and in every other process on the same database.
 */
import { findMachineIdByName, findUserWithGrants } from '../../store/users.ts';
import { findApplicationByClientId, listAppKeys } from '../../store/apps.ts';
import type { DB } from '../../store/database.ts';
import { listPolicyProviders } from '../../store/identity-providers.ts';
import { findInstance } from '../../store/instances.ts';
import { findProjectSettings } from '../../store/projects.ts';
import type { Address, OidcAppType, UserKind, UserState } from '../../store/schema.ts';
import { getFeatures, type FeatureName, type FeatureState } from './features.ts';
import { effectiveBranding, effectiveLoginPolicy, type Branding, type EffectiveLoginPolicy } from './policies.ts';
import type { RoleGrant } from '../kernel/principal.ts';
import type { AccessTokenType, AuthMethod } from '../../oidc/vocabulary.ts';

export interface PublicKeyEntry {
  id: string;
  pem: string;
  expiresAt: Date | null;
}

export interface Application {
  appId: string;
  instanceId: string;
  orgId: string;
  projectId: string;
  clientId: string;
  name: string;
  /** 'api': a resource server, which may only introspect. */
  kind: 'oidc' | 'api';
  secretHash: string | null;
  authMethod: AuthMethod;
  /** Native applications' loopback redirect URIs match on any port (domain/redirect-uris.ts). */
  appType: OidcAppType;
  redirectUris: readonly string[];
  postLogoutRedirectUris: readonly string[];
  responseTypes: readonly string[];
  grantTypes: readonly string[];
  accessTokenType: AccessTokenType;
  idTokenUserinfoAssertion: boolean;
  /** docs/management-api.md#roles: role claims also in the ID token, in JWT access tokens. */
  idTokenRoleAssertion: boolean;
  accessTokenRoleAssertion: boolean;
  devMode: boolean;
  keys: readonly PublicKeyEntry[];
}

/** A project as sign-in and the role claims need it (docs/management-api.md#roles). */
export interface ProjectSettings {
  id: string;
  orgId: string;
  /** Role claims in userinfo and introspection without a role scope. */
  roleAssertion: boolean;
  /** Sign-in is refused to users without any of the project's roles. */
  authorizationRequired: boolean;
  /** Sign-in is refused to users of other organizations. */
  projectAccessRequired: boolean;
}

/** Roles of one project given to a user, and the organization that gave them. */
export interface UserAuthorization {
  projectId: string;
  orgId: string;
  orgDomain: string;
  roles: readonly string[];
}

export interface User {
  id: string;
  instanceId: string;
  orgId: string;
  kind: UserKind;
  userName: string;
  /** userName@primaryDomain: the `username` claim. */
  loginName: string;
  state: UserState;
  lockedUntil: Date | null;
  email: string | null;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  nickname: string | null;
  displayName: string | null;
  preferredLanguage: string | null;
  gender: string | null;
  address: Address | null;
  secretHash: string | null;
  accessTokenType: AccessTokenType;
  /** Access tokens issued before this no longer count (deactivated, locked, deleted, password reset). */
  tokensValidAfter: Date | null;
  /** No token issued before the user existed speaks for it. */
  createdAt: Date;
  changedAt: Date;
  roles: readonly RoleGrant[];
  /** Project roles given to the user (docs/management-api.md#roles). */
  authorizations: readonly UserAuthorization[];
  keys: readonly PublicKeyEntry[];
}

/** The instance-wide settings read on OAuth requests: feature flags and the impersonation switch. */
export interface InstanceSettings {
  features: Record<FeatureName, FeatureState>;
  enableImpersonation: boolean;
}

/**
 * What the login pages follow for an organization (docs/branding-and-login-policy.md): its own login
 * policy and active branding, else the instance's, else ZITADEL's defaults.
 */
export interface OrgSettings {
  login: EffectiveLoginPolicy;
  /** The active branding (never the preview); images are asset keys under `branding.ownerId`. */
  branding: Branding;
  /**
   * The external identity providers the login name page offers (docs/federation.md#signing-in-with-a-provider):
   * the active ones the effective login policy lists, when it allows external sign-in; else none
   * (and then no query was made for them).
   */
  idps: readonly OfferedIdp[];
}

/** An identity provider as the login name page shows it. */
export interface OfferedIdp {
  id: string;
  name: string;
  /**
   * Where the browser is sent to sign in: the origin of the OAuth authorization endpoint, or of the
   * OpenID issuer (whose discovered authorization endpoint is there for the providers Gatehouse
   * knows); the login name page's form-action admits it. Undefined when it is no URL.
   */
  origin: string | undefined;
}

function originOf(url: string | null): string | undefined {
  try {
    return url === null ? undefined : new URL(url).origin;
  } catch {
    return undefined;
  }
}

const MAX_ENTRIES = 10_000;

/** A map that empties itself rather than grow without bound (callers can name arbitrary keys). */
class BoundedCache<V> {
  readonly #map = new Map<string, Promise<V>>();
  get(key: string, load: () => Promise<V>): Promise<V> {
    let value = this.#map.get(key);
    if (!value) {
      if (this.#map.size >= MAX_ENTRIES) this.#map.clear();
      value = load();
      this.#map.set(key, value);
      // A failed load (database down) is not remembered.
      value.catch(() => this.#map.delete(key));
    }
    return value;
  }
  clear(): void {
    this.#map.clear();
  }
}

export class Directory {
  readonly #db: DB;
  readonly #apps = new BoundedCache<Application | undefined>();
  readonly #machines = new BoundedCache<User | undefined>();
  readonly #users = new BoundedCache<User | undefined>();
  readonly #instances = new BoundedCache<InstanceSettings>();
  readonly #projects = new BoundedCache<ProjectSettings | undefined>();
  readonly #clientOrgs = new BoundedCache<string | undefined>();
  readonly #orgSettings = new BoundedCache<OrgSettings>();

  constructor(db: DB) {
    this.#db = db;
  }

  clear(): void {
    this.#apps.clear();
    this.#machines.clear();
    this.#users.clear();
    this.#instances.clear();
    this.#projects.clear();
    this.#clientOrgs.clear();
    this.#orgSettings.clear();
  }

  /** Settings of an instance; an unknown instance has the system defaults and no impersonation. */
  instance(instanceId: string): Promise<InstanceSettings> {
    return this.#instances.get(instanceId, async () => {
      const [features, row] = await Promise.all([getFeatures(this.#db, instanceId), findInstance(this.#db, instanceId)]);
      return { features, enableImpersonation: row?.enable_impersonation ?? false };
    });
  }

  /**
   * The effective login policy and branding of an organization of the instance; of the instance
   * itself when `orgId` is undefined. An id that names no organization gets the instance's.
   */
  orgSettings(instanceId: string, orgId: string | undefined): Promise<OrgSettings> {
    return this.#orgSettings.get(`${instanceId}\n${orgId ?? ''}`, async () => {
      const owner = { instanceId, orgId };
      const [login, branding] = await Promise.all([effectiveLoginPolicy(this.#db, owner), effectiveBranding(this.#db, owner)]);
      // As domain/federation/providers.ts activeProviders reads them; no query while external sign-in is off.
      const idps = login.allowExternalIdp
        ? (await listPolicyProviders(this.#db, instanceId, login.source === 'org' && orgId !== undefined ? orgId : instanceId))
            .filter((row) => row.state === 'active')
            .map((row) => ({ id: row.id, name: row.name, origin: originOf(row.kind === 'oidc' ? row.issuer : row.authorization_endpoint) }))
        : [];
      return { login, branding, idps };
    });
  }

  application(instanceId: string, clientId: string): Promise<Application | undefined> {
    return this.#apps.get(`${instanceId}\n${clientId}`, () => loadApplication(this.#db, instanceId, clientId));
  }

  machineByName(instanceId: string, userName: string): Promise<User | undefined> {
    return this.#machines.get(`${instanceId}\n${userName.toLowerCase()}`, async () => {
      const id = await findMachineIdByName(this.#db, instanceId, userName);
      return id === undefined ? undefined : this.user(id);
    });
  }

  /**
   * The organization of a token's client: an application by client id, else a machine user by name
   * (client_credentials) or by id (the JWT profile grant); undefined for anything else. One cached
   * lookup on introspection's path.
   */
  clientOrg(instanceId: string, clientId: string): Promise<string | undefined> {
    return this.#clientOrgs.get(`${instanceId}\n${clientId}`, async () => {
      const app = await this.application(instanceId, clientId);
      if (app) return app.orgId;
      const machine = (await this.machineByName(instanceId, clientId)) ?? (await this.user(clientId));
      return machine?.instanceId === instanceId && machine.kind === 'machine' ? machine.orgId : undefined;
    });
  }

  user(userId: string): Promise<User | undefined> {
    return this.#users.get(userId, () => loadUser(this.#db, userId));
  }

  /**
   * A project of the instance (audience scopes, docs/security.md 10.6; role claims and sign-in checks,
   * docs/management-api.md#roles); undefined when none has the id.
   */
  project(instanceId: string, projectId: string): Promise<ProjectSettings | undefined> {
    return this.#projects.get(`${instanceId}\n${projectId}`, async () => {
      const row = await findProjectSettings(this.#db, instanceId, projectId);
      if (row === undefined) return undefined;
      return {
        id: row.id,
        orgId: row.org_id,
        roleAssertion: row.role_assertion,
        authorizationRequired: row.authorization_required,
        projectAccessRequired: row.project_access_required,
      };
    });
  }
}

async function loadApplication(db: DB, instanceId: string, clientId: string): Promise<Application | undefined> {
  const row = await findApplicationByClientId(db, instanceId, clientId);
  if (!row) return undefined;
  const keys = await listAppKeys(db, row.id);
  return {
    appId: row.id,
    instanceId: row.instance_id,
    orgId: row.org_id,
    projectId: row.project_id,
    clientId: row.client_id,
    name: row.name,
    kind: row.kind,
    secretHash: row.secret_hash,
    authMethod: row.auth_method,
    appType: row.oidc_app_type,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    responseTypes: row.response_types,
    grantTypes: row.grant_types,
    accessTokenType: row.access_token_type,
    idTokenUserinfoAssertion: row.id_token_userinfo_assertion,
    idTokenRoleAssertion: row.id_token_role_assertion,
    accessTokenRoleAssertion: row.access_token_role_assertion,
    devMode: row.dev_mode,
    keys: keys.map((k) => ({ id: k.id, pem: k.public_key, expiresAt: k.expires_at })),
  };
}

async function loadUser(db: DB, userId: string): Promise<User | undefined> {
  const row = await findUserWithGrants(db, userId);
  if (!row) return undefined;
  const { roles, keys, authorizations } = row;
  return {
    id: row.id,
    instanceId: row.instance_id,
    orgId: row.org_id,
    kind: row.kind,
    userName: row.user_name,
    loginName: `${row.user_name}@${row.primary_domain}`,
    state: row.state,
    lockedUntil: row.locked_until,
    email: row.email,
    emailVerified: row.email_verified,
    phone: row.phone,
    phoneVerified: row.phone_verified,
    givenName: row.given_name,
    familyName: row.family_name,
    nickname: row.nickname,
    displayName: row.display_name,
    preferredLanguage: row.preferred_language,
    gender: row.gender,
    address: row.address,
    secretHash: row.secret_hash,
    accessTokenType: row.access_token_type,
    tokensValidAfter: row.tokens_valid_after,
    createdAt: row.created_at,
    changedAt: row.changed_at,
    roles: roles.map((r) => ({ role: r.role, orgId: r.scope_org_id })),
    authorizations: authorizations.map((a) => ({ projectId: a.project_id, orgId: a.org_id, orgDomain: a.primary_domain, roles: a.roles })),
    keys: keys.map((k) => ({ id: k.id, pem: k.public_key, expiresAt: k.expires_at === null ? null : new Date(k.expires_at) })),
  };
}
