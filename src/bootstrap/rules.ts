/**
 * Validation rules for the document, organizations and users, and the uniqueness checks that span
 * the whole document (names, domains, client ids, ids). Apps and keys: rules-apps.ts.
 */
import { isValidEmail } from '../domain/users/email-address.ts';
import { FEATURES, type FeatureName } from '../domain/instance/features.ts';
import type { Address } from '../store/schema.ts';
import { ID_RULE, NAME_RULE, readAuthorization, readProject, readPublicKey } from './rules-apps.ts';
import { readBranding, readLoginPolicy, registrationSwitch } from './rules-policies.ts';
import { existsSync, statSync } from 'node:fs';
import path_ from 'node:path';
import { LATEST_PAT_EXPIRY } from '../domain/tokens/personal-access-tokens.ts';
import { GENDERS, ROLES, USER_STATES, type AuthorizationSpec, type BootstrapDocument, type HumanSpec, type MachineSpec, type OrgSpec, type PatSpec, type Role } from './document.ts';
import { Fields, readEnum, type Issues, type StringRule } from './validator.ts';
import { ACCESS_TOKEN_TYPES } from '../oidc/vocabulary.ts';
import { checkProviderNames, readIdentityProvider } from './rules-idps.ts';

const pattern = (regex: RegExp, problem: string): StringRule => ({ check: (value) => (regex.test(value) ? undefined : problem) });

const USER_NAME = pattern(/^\S{1,200}$/, 'must not contain spaces (at most 200 characters)');
const DOMAIN = pattern(
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i,
  'must be a domain name like acme.test',
);
const EMAIL: StringRule = { check: (value) => (isValidEmail(value) ? undefined : 'must be an email address like alice@acme.test') };
const PHONE = pattern(/^\+?[0-9][0-9 ()./-]{2,30}$/, 'must be a phone number like +41791234567');
const LANGUAGE = pattern(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'must be a language tag like en or de-CH');
const TEXT = NAME_RULE;

function readRoles(fields: Fields): Role[] | undefined {
  return fields.stringList('roles', (item, path) => readEnum(fields.issues, path, item, ROLES)) as Role[] | undefined;
}

function readAddress(fields: Fields): Address | null | undefined {
  const raw = fields.raw('address');
  if (raw === undefined) return undefined;
  if (raw === null) return null;
  const address = Fields.of(fields.issues, fields.at('address'), raw, ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country']);
  if (!address) return undefined;
  const result: Address = {};
  const set = (key: keyof Address, name: string) => {
    const value = address.string(name, TEXT);
    if (value !== undefined) result[key] = value;
  };
  set('formatted', 'formatted');
  set('street_address', 'streetAddress');
  set('locality', 'locality');
  set('region', 'region');
  set('postal_code', 'postalCode');
  set('country', 'country');
  return result;
}

const HUMAN_KEYS = [
  'id', 'userName', 'password', 'email', 'emailVerified', 'phone', 'phoneVerified', 'givenName', 'familyName', 'nickname',
  'displayName', 'preferredLanguage', 'gender', 'address', 'state', 'roles', 'authorizations',
];

function readAuthorizations(fields: Fields): AuthorizationSpec[] {
  const list = fields.list('authorizations', (item, at) => readAuthorization(fields.issues, at, item)) ?? [];
  const seen = new Set<string>();
  for (const authorization of list) {
    if (seen.has(authorization.project)) fields.issues.add(`${authorization.path}.project`, `project "${authorization.project}" is named twice for this user`);
    seen.add(authorization.project);
  }
  return list;
}

function readHuman(issues: Issues, path: string, value: unknown): HumanSpec | undefined {
  const fields = Fields.of(issues, path, value, HUMAN_KEYS);
  if (!fields) return undefined;
  const userName = fields.requiredString('userName', USER_NAME);
  const human: Omit<HumanSpec, 'userName'> = {
    path,
    id: fields.string('id', ID_RULE),
    password: fields.string('password'),
    email: fields.nullableString('email', EMAIL),
    emailVerified: fields.boolean('emailVerified'),
    phone: fields.nullableString('phone', PHONE),
    phoneVerified: fields.boolean('phoneVerified'),
    givenName: fields.nullableString('givenName', TEXT),
    familyName: fields.nullableString('familyName', TEXT),
    nickname: fields.nullableString('nickname', TEXT),
    displayName: fields.nullableString('displayName', TEXT),
    preferredLanguage: fields.nullableString('preferredLanguage', LANGUAGE),
    gender: fields.raw('gender') === null ? null : fields.enumValue('gender', GENDERS),
    address: readAddress(fields),
    state: fields.enumValue('state', USER_STATES),
    roles: readRoles(fields),
    authorizations: readAuthorizations(fields),
  };
  return userName === undefined ? undefined : { ...human, userName };
}

function readMachine(issues: Issues, path: string, value: unknown): MachineSpec | undefined {
  const fields = Fields.of(issues, path, value, ['id', 'userName', 'secret', 'accessTokenType', 'roles', 'publicKeys', 'pats', 'authorizations']);
  if (!fields) return undefined;
  const id = fields.string('id', ID_RULE);
  const userName = fields.requiredString('userName', USER_NAME);
  const secret = fields.string('secret');
  const accessTokenType = fields.enumValue('accessTokenType', ACCESS_TOKEN_TYPES) ?? 'opaque';
  const roles = readRoles(fields) ?? [];
  const publicKeys = fields.list('publicKeys', (item, at) => readPublicKey(issues, at, item)) ?? [];
  const pats = fields.list('pats', (item, at) => readPat(issues, at, item)) ?? [];
  const authorizations = readAuthorizations(fields);
  return userName === undefined ? undefined : { path, id, userName, secret, accessTokenType, roles, publicKeys, pats, authorizations };
}

/**
 * A personal access token kept in a file: an RFC 3339 expiry in the future (a token always expires,
 * as ZITADEL's API requires) and the file, relative to the bootstrap file.
 */
function readPat(issues: Issues, path: string, value: unknown): PatSpec | undefined {
  const fields = Fields.of(issues, path, value, ['expirationDate', 'writeTo']);
  if (!fields) return undefined;
  const expiry = fields.requiredString('expirationDate', {
    check: (text) => {
      const at = Date.parse(text);
      if (!/^\d{4}-\d\d-\d\d(T|$)/.test(text) || Number.isNaN(at)) return 'must be an RFC 3339 date or time like 2030-01-01T00:00:00Z';
      if (at <= Date.now()) return 'lies in the past: give a later date (the token in the file has expired)';
      if (at >= LATEST_PAT_EXPIRY) return 'must be before the year 10000';
      return undefined;
    },
  });
  const writeTo = fields.requiredString('writeTo', { check: (text) => (text.trim() === '' || text.includes('\0') ? 'must be a file path' : undefined) });
  if (expiry === undefined || writeTo === undefined) return undefined;
  const full = path_.resolve(path_.dirname(path_.resolve(issues.file)), writeTo);
  if (existsSync(full) && statSync(full).isDirectory()) {
    issues.add(fields.at('writeTo'), `${writeTo} is a folder; name a file`);
    return undefined;
  }
  return { path, expirationDate: new Date(expiry), writeTo: full };
}

function readOrg(issues: Issues, path: string, value: unknown): OrgSpec | undefined {
  const fields = Fields.of(issues, path, value, ['id', 'name', 'domain', 'allowRegister', 'branding', 'loginPolicy', 'identityProviders', 'users', 'machines', 'projects']);
  if (!fields) return undefined;
  const id = fields.string('id', ID_RULE);
  const name = fields.requiredString('name', NAME_RULE);
  const domain = fields.requiredString('domain', DOMAIN)?.toLowerCase();
  const branding = fields.has('branding') ? readBranding(issues, fields.at('branding'), fields.raw('branding')) : undefined;
  const loginPolicy = fields.has('loginPolicy') ? readLoginPolicy(issues, fields.at('loginPolicy'), fields.raw('loginPolicy')) : undefined;
  const allowRegister = registrationSwitch(issues, path, fields.boolean('allowRegister'), loginPolicy);
  const identityProviders = fields.list('identityProviders', (item, at) => readIdentityProvider(issues, at, item)) ?? [];
  checkProviderNames(issues, identityProviders);
  const users = fields.list('users', (item, at) => readHuman(issues, at, item)) ?? [];
  const machines = fields.list('machines', (item, at) => readMachine(issues, at, item)) ?? [];
  const projects = fields.list('projects', (item, at) => readProject(issues, at, item)) ?? [];
  if (name === undefined || domain === undefined) return undefined;
  return { path, id, name, domain, allowRegister, branding, loginPolicy, identityProviders, users, machines, projects };
}

/** Names, domains, client ids and ids must be unique where the database (or OAuth) needs them to be. */
function checkUnique(issues: Issues, orgs: OrgSpec[]): void {
  const seen = new Map<string, string>();
  const claim = (namespace: string, key: string, path: string, label: string): boolean => {
    const first = seen.get(`${namespace}\u0000${key}`);
    if (first !== undefined) {
      issues.add(path, `${label} is already used at ${first}`);
      return false;
    }
    seen.set(`${namespace}\u0000${key}`, path);
    return true;
  };
  const id = (namespace: string, value: string | undefined, path: string) => value !== undefined && claim(`${namespace}.id`, value, `${path}.id`, `id "${value}"`);
  orgs.forEach((org, o) => {
    id('org', org.id, org.path);
    claim('org.name', org.name.toLowerCase(), `${org.path}.name`, `organization name "${org.name}"`);
    claim('org.domain', org.domain, `${org.path}.domain`, `domain "${org.domain}"`);
    for (const user of [...org.users, ...org.machines]) {
      id('user', user.id, user.path);
      const unique = claim(`user.name.${o}`, user.userName.toLowerCase(), `${user.path}.userName`, `user name "${user.userName}" (in this organization)`);
      if (unique && 'accessTokenType' in user) {
        // client_credentials names a machine by its user name alone, so it is unique in the instance.
        claim('machine.name', user.userName.toLowerCase(), `${user.path}.userName`, `machine user name "${user.userName}"`);
      }
    }
    for (const machine of org.machines) for (const key of machine.publicKeys) claim('machineKey.id', key.keyId, `${key.path}.keyId`, `keyId "${key.keyId}"`);
    for (const machine of org.machines) for (const pat of machine.pats) claim('pat.writeTo', pat.writeTo, `${pat.path}.writeTo`, `the file ${pat.writeTo}`);
    org.projects.forEach((project, p) => {
      id('project', project.id, project.path);
      claim(`project.name.${o}`, project.name.toLowerCase(), `${project.path}.name`, `project name "${project.name}" (in this organization)`);
      for (const app of project.apps) {
        id('app', app.id, app.path);
        claim(`app.name.${o}.${p}`, app.name.toLowerCase(), `${app.path}.name`, `application name "${app.name}" (in this project)`);
        claim('app.clientId', app.clientId, `${app.path}.clientId`, `clientId "${app.clientId}"`);
        for (const key of app.publicKeys) claim('appKey.id', key.keyId, `${key.path}.keyId`, `keyId "${key.keyId}"`);
      }
    });
  });
  // A machine user's name is its client_id for client_credentials: an app must not take it too.
  for (const org of orgs) {
    for (const project of org.projects) {
      for (const app of project.apps) {
        const machine = seen.get(`machine.name\u0000${app.clientId.toLowerCase()}`);
        if (machine !== undefined) issues.add(`${app.path}.clientId`, `clientId "${app.clientId}" is the user name of the machine user at ${machine} (both would be client_id "${app.clientId}")`);
      }
    }
  }
}

export function readDocument(issues: Issues, value: unknown): BootstrapDocument | undefined {
  const fields = Fields.of(issues, '', value, ['features', 'security', 'branding', 'loginPolicy', 'identityProviders', 'orgs']);
  if (!fields) return undefined;
  const features: Partial<Record<FeatureName, boolean>> = {};
  if (fields.has('features')) {
    const flags = Fields.of(issues, 'features', fields.raw('features'), Object.keys(FEATURES));
    for (const name of Object.keys(FEATURES) as FeatureName[]) {
      const enabled = flags?.boolean(name);
      if (enabled !== undefined) features[name] = enabled;
    }
  }
  const security = fields.has('security') ? Fields.of(issues, 'security', fields.raw('security'), ['enableImpersonation']) : undefined;
  const enableImpersonation = security?.boolean('enableImpersonation');
  const branding = fields.has('branding') ? readBranding(issues, 'branding', fields.raw('branding')) : undefined;
  const loginPolicy = fields.has('loginPolicy') ? readLoginPolicy(issues, 'loginPolicy', fields.raw('loginPolicy')) : undefined;
  const identityProviders = fields.list('identityProviders', (item, path) => readIdentityProvider(issues, path, item)) ?? [];
  checkProviderNames(issues, identityProviders);
  const orgs = fields.list('orgs', (item, path) => readOrg(issues, path, item)) ?? [];
  checkUnique(issues, orgs);
  return { features, security: { enableImpersonation }, branding, loginPolicy, identityProviders, orgs };
}
