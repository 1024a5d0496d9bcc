/**
 * Every event Gatehouse appends, by aggregate, with its payload: the one vocabulary of the event log
 * (as ZITADEL declares its events per aggregate). appendEvent (events.ts) takes only these types,
 * each with its payload's shape, and derives the aggregate from the type; docs/events.md lists the
 * same types (a test keeps them in step).
 */

/** What a change of columns reports: the names of the columns (or settings) that changed. */
export interface Changed {
  changed: string[];
}

/** No payload. */
export type Empty = Record<string, never>;

// ---- instance ----

export interface InstanceEvents {
  'instance.added': { name: string; defaultOrgId: string | null; enableImpersonation: boolean };
  'instance.changed': Changed & { enable_impersonation?: boolean; default_org_id?: string };
  /** The features switched, with their new state. */
  'instance.features.set': Record<string, boolean>;
  'instance.features.reset': Empty;
  /** The instance's branding preview changed: the fields (colours, `logo`, `iconDark`, …). */
  'instance.policy.label.changed': Changed;
  'instance.policy.label.activated': Empty;
  'instance.policy.login.changed': Changed;
  /** An identity provider was added (docs/federation.md); never its secret. */
  'instance.idp.added': { idpId: string; kind: string; name: string };
  /** A provider changed: the fields (`clientSecret` when the secret was replaced, never its value). */
  'instance.idp.changed': Changed & { idpId: string };
  /** A provider was removed, from every login policy too. */
  'instance.idp.removed': { idpId: string };
  /** The login policy offers a provider. */
  'instance.policy.login.idp.added': { idpId: string };
  /** The login policy no longer offers a provider. */
  'instance.policy.login.idp.removed': { idpId: string };
  'signing_key.added': { alg: string; signFrom: string };
}

// ---- organizations ----

export interface OrgEvents {
  'org.added': { name: string; domain: string; allowRegister?: boolean };
  'org.changed': Changed;
  'org.policy.label.added': Empty;
  'org.policy.label.changed': Changed;
  'org.policy.label.activated': Empty;
  'org.policy.label.removed': Empty;
  'org.policy.login.added': Empty;
  'org.policy.login.changed': Changed;
  'org.policy.login.removed': Empty;
  /** An identity provider was added (docs/federation.md); never its secret. */
  'org.idp.added': { idpId: string; kind: string; name: string };
  /** A provider changed: the fields (`clientSecret` when the secret was replaced, never its value). */
  'org.idp.changed': Changed & { idpId: string };
  /** A provider was removed, from every login policy too. */
  'org.idp.removed': { idpId: string };
  /** The login policy offers a provider. */
  'org.policy.login.idp.added': { idpId: string };
  /** The login policy no longer offers a provider. */
  'org.policy.login.idp.removed': { idpId: string };
}

// ---- users ----

/** How a new password was proved. */
export type PasswordProof = 'current_password' | 'reset_code' | 'administrator';

export interface UserEvents {
  /**
   * A human user, whoever adds it (an administrator, the bootstrap file, the human itself at
   * registration): `roles` when the bootstrap file names them, `selfRegistered` for a registration.
   */
  'user.human.added': { userName: string; email: string | null; phone: string | null; roles?: string[]; selfRegistered?: true };
  /** A machine user: `name` is its display name, `roles` and `keyIds` what the bootstrap file gave. */
  'user.machine.added': { userName: string; name: string | null; roles: string[]; keyIds: string[] };
  'user.human.changed': Changed;
  'user.machine.changed': Changed;
  'user.username.changed': { userName: string };
  'user.human.profile.changed': Changed;
  'user.human.email.changed': { email: string };
  'user.human.email.verified': { email: string | null };
  /** How the code travels; `withheld` when asked for by an administrator whose word does not count for the address. */
  'user.human.email.code.added': { delivery: 'send' | 'return' | 'withheld' };
  'user.human.phone.changed': { phone: string };
  'user.human.phone.verified': Empty;
  'user.human.password.changed': { proof?: PasswordProof };
  'user.human.password.code.added': { delivery: 'send' | 'return' };
  'user.human.mfa.otp.added': Empty;
  'user.human.mfa.otp.verified': Empty;
  'user.human.mfa.otp.removed': Empty;
  'user.human.passwordless.token.added': { passkeyId: string; rpId: string; codeId?: string };
  'user.human.passwordless.token.verified': { passkeyId: string; name: string };
  'user.human.passwordless.token.removed': { passkeyId: string };
  /** A signature counter that went back: the credential may have been copied. */
  'user.human.passwordless.token.cloned': { passkeyId: string; storedCounter: number; presentedCounter: number };
  'user.human.passwordless.initialization.code.added': { codeId: string; delivery: 'send' | 'return' };
  /** An account at an identity provider was linked to the user (docs/federation.md#links). */
  'user.human.externalidp.added': { idpId: string; externalUserId: string };
  /** A link to an account at an identity provider was removed. */
  'user.human.externalidp.removed': { idpId: string; externalUserId: string };
  'user.machine.key.added': { keyId: string; expiresAt: string | null; generated?: boolean };
  'user.machine.key.removed': { keyId: string };
  'user.personal.access.token.added': { tokenId: string; expiresAt: string };
  'user.personal.access.token.removed': { tokenId: string };
  'user.machine.secret.set': Empty;
  'user.machine.secret.removed': Empty;
  /** Organization roles given to the user, in `orgId` (the ones it did not have yet). */
  'user.roles.added': { orgId: string; roles: string[] };
  'user.deactivated': Empty;
  'user.reactivated': Empty;
  /** By an administrator, or after repeated failures (`until` when the lock ends by itself). */
  'user.locked': { reason: string; until?: string };
  'user.unlocked': Empty;
  'user.removed': { userName: string };
  /** A record only (it changes no cached state): who exchanged which token for what (RFC 8693). */
  'user.token.exchanged': {
    clientId: string;
    shape: 'exchange' | 'delegation' | 'impersonation';
    subject: string;
    actor?: string;
    subjectTokenType: string;
    actorTokenType?: string;
    issuedTokenType: string;
    scopes: string[];
    audience: string[];
    grantId: string;
  };
}

// ---- projects, applications, authorizations ----

export interface ProjectEvents {
  'project.added': { name: string };
  'project.changed': Changed;
  'project.removed': { name: string };
  'project.role.added': { key: string; displayName: string; group: string };
  'project.role.changed': { key: string } & Changed;
  'project.role.removed': { key: string };
}

export interface AppEvents {
  'app.added': { name: string; clientId: string; projectId: string; kind: 'oidc' | 'api' };
  'app.changed': Changed;
  'app.removed': { name: string; clientId: string; projectId: string };
  'app.secret.changed': Empty;
  'app.key.added': { keyId: string; expiresAt: string | null };
  'app.key.removed': { keyId: string };
}

export interface AuthorizationEvents {
  'authorization.added': { userId: string; projectId: string; roles: string[] };
  'authorization.changed': { userId: string; projectId: string; roles: string[] };
  'authorization.removed': { userId: string; projectId: string };
}

export type EventPayloads = InstanceEvents & OrgEvents & UserEvents & ProjectEvents & AppEvents & AuthorizationEvents;
export type EventType = keyof EventPayloads;
export type UserEventType = keyof UserEvents;

export type Aggregate = 'instance' | 'org' | 'user' | 'project' | 'app' | 'authorization' | 'signing_key';

/** The aggregate of every event type: the list docs/events.md follows. */
export const EVENT_AGGREGATES = {
  'instance.added': 'instance',
  'instance.changed': 'instance',
  'instance.features.set': 'instance',
  'instance.features.reset': 'instance',
  'instance.policy.label.changed': 'instance',
  'instance.policy.label.activated': 'instance',
  'instance.policy.login.changed': 'instance',
  'instance.idp.added': 'instance',
  'instance.idp.changed': 'instance',
  'instance.idp.removed': 'instance',
  'instance.policy.login.idp.added': 'instance',
  'instance.policy.login.idp.removed': 'instance',
  'signing_key.added': 'signing_key',
  'org.added': 'org',
  'org.changed': 'org',
  'org.policy.label.added': 'org',
  'org.policy.label.changed': 'org',
  'org.policy.label.activated': 'org',
  'org.policy.label.removed': 'org',
  'org.policy.login.added': 'org',
  'org.policy.login.changed': 'org',
  'org.policy.login.removed': 'org',
  'org.idp.added': 'org',
  'org.idp.changed': 'org',
  'org.idp.removed': 'org',
  'org.policy.login.idp.added': 'org',
  'org.policy.login.idp.removed': 'org',
  'user.human.added': 'user',
  'user.machine.added': 'user',
  'user.human.changed': 'user',
  'user.machine.changed': 'user',
  'user.username.changed': 'user',
  'user.human.profile.changed': 'user',
  'user.human.email.changed': 'user',
  'user.human.email.verified': 'user',
  'user.human.email.code.added': 'user',
  'user.human.phone.changed': 'user',
  'user.human.phone.verified': 'user',
  'user.human.password.changed': 'user',
  'user.human.password.code.added': 'user',
  'user.human.mfa.otp.added': 'user',
  'user.human.mfa.otp.verified': 'user',
  'user.human.mfa.otp.removed': 'user',
  'user.human.passwordless.token.added': 'user',
  'user.human.passwordless.token.verified': 'user',
  'user.human.passwordless.token.removed': 'user',
  'user.human.passwordless.token.cloned': 'user',
  'user.human.passwordless.initialization.code.added': 'user',
  'user.human.externalidp.added': 'user',
  'user.human.externalidp.removed': 'user',
  'user.machine.key.added': 'user',
  'user.machine.key.removed': 'user',
  'user.personal.access.token.added': 'user',
  'user.personal.access.token.removed': 'user',
  'user.machine.secret.set': 'user',
  'user.machine.secret.removed': 'user',
  'user.roles.added': 'user',
  'user.deactivated': 'user',
  'user.reactivated': 'user',
  'user.locked': 'user',
  'user.unlocked': 'user',
  'user.removed': 'user',
  'user.token.exchanged': 'user',
  'project.added': 'project',
  'project.changed': 'project',
  'project.removed': 'project',
  'project.role.added': 'project',
  'project.role.changed': 'project',
  'project.role.removed': 'project',
  'app.added': 'app',
  'app.changed': 'app',
  'app.removed': 'app',
  'app.secret.changed': 'app',
  'app.key.added': 'app',
  'app.key.removed': 'app',
  'authorization.added': 'authorization',
  'authorization.changed': 'authorization',
  'authorization.removed': 'authorization',
} as const satisfies Record<EventType, Aggregate>;

/** The payload argument of an event type, for helpers taking `...payload`: optional when the payload has no required field. */
export type PayloadArgument<T extends EventType> = Record<string, never> extends EventPayloads[T] ? [payload?: EventPayloads[T]] : [payload: EventPayloads[T]];
