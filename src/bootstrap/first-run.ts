/**
 * First run (docs/bootstrap.md#how-a-file-is-applied): on a database without an instance, and
 * without a bootstrap file, create a default organization, an admin user, a demo client and the
 * machine user `admin-api` (IAM_OWNER) with a personal access token for 30 days, written to a file
 * readable by the server's account only; hand back the random password and secret once so the caller
 * can print them. Safe when several processes start at once on one PostgreSQL: the set-up lock
 * serializes them and the loser finds the instance already there.
 */
import { isIP } from 'node:net';
import { apiAudienceScope } from '../config/index.ts';
import { randomToken } from '../domain/kernel/ids.ts';
import { addPersonalAccessToken, newPersonalAccessToken, personalAccessTokenScopes } from '../domain/tokens/personal-access-tokens.ts';
import { holdSetupLock } from '../domain/instance/instance-admin.ts';
import type { DB } from '../store/database.ts';
import { findFirstInstance } from '../store/instances.ts';
import { applyInTransaction } from './apply.ts';
import { validateBootstrap } from './schema.ts';
import { writeTokenFile } from './token-files.ts';

export interface FirstRunOptions {
  /** {base_url}: the issuer; its host names the default organization's domain. */
  externalUrl: string;
  /** `<service>` of the reserved API audience scope, printed for API callers. */
  serviceName: string;
  /** Where the `admin-api` machine user's personal access token is written (mode 600). */
  patPath: string;
}

export interface FirstRunResult {
  instanceId: string;
  org: { id: string; name: string; domain: string };
  /** `password` is the only copy: only its argon2id hash is stored. */
  admin: { id: string; userName: string; loginName: string; password: string };
  project: { id: string; name: string };
  /** `clientSecret` is the only copy: only its hash is stored. */
  client: { id: string; clientId: string; clientSecret: string; redirectUri: string };
  /** The scope that adds the Gatehouse API audience to a token. */
  apiScope: string;
  /** The API's first credential: a personal access token of the machine user `admin-api`, in a file. */
  pat: { userId: string; userName: string; tokenId: string; path: string; expiresAt: Date };
}

const ORG_NAME = 'Gatehouse';
const ADMIN = 'admin';
const PROJECT = 'Demo';
const CLIENT_ID = 'demo-web';
const REDIRECT_URI = 'http://localhost:3000/callback';
const API_MACHINE = 'admin-api';
/** How long the first personal access token lives: long enough for the first days, never forever. */
const FIRST_PAT_DAYS = 30;

/** The external URL's host, or gatehouse.localhost when that is localhost or an IP address. */
export function defaultDomain(externalUrl: string): string {
  const host = new URL(externalUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || isIP(host) !== 0 ? 'gatehouse.localhost' : host;
}

/** 24 characters of base64url (144 bits), with at least one lowercase, uppercase letter and digit. */
function randomPassword(): string {
  for (;;) {
    const candidate = randomToken(18);
    if (/[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /\d/.test(candidate)) return candidate;
  }
}

function firstRunDocument(domain: string, password: string, clientSecret: string): unknown {
  return {
    orgs: [
      {
        name: ORG_NAME,
        domain,
        users: [
          {
            userName: ADMIN,
            password,
            email: `${ADMIN}@${domain}`,
            emailVerified: true,
            givenName: 'Gatehouse',
            familyName: 'Admin',
            displayName: 'Gatehouse Admin',
            preferredLanguage: 'en',
            roles: ['IAM_OWNER'],
          },
        ],
        machines: [{ userName: API_MACHINE, roles: ['IAM_OWNER'] }],
        projects: [
          {
            name: PROJECT,
            apps: [
              {
                name: CLIENT_ID,
                clientId: CLIENT_ID,
                clientSecret,
                authMethod: 'client_secret_basic',
                redirectUris: [REDIRECT_URI],
                postLogoutRedirectUris: ['http://localhost:3000/'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
                accessTokenType: 'jwt',
                devMode: true,
              },
            ],
          },
        ],
      },
    ],
  };
}

async function hasInstance(db: DB): Promise<boolean> {
  return (await findFirstInstance(db)) !== undefined;
}

/** Creates the first-run defaults when the database has no instance; null when it already has one. */
export async function ensureFirstRun(db: DB, options: FirstRunOptions): Promise<FirstRunResult | null> {
  if (await hasInstance(db)) return null;
  const domain = defaultDomain(options.externalUrl);
  const password = randomPassword();
  const clientSecret = randomToken(32);
  const bootstrap = validateBootstrap(firstRunDocument(domain, password, clientSecret), 'first-run defaults');
  const pat = newPersonalAccessToken();
  const patExpiry = new Date(Date.now() + FIRST_PAT_DAYS * 86_400_000);
  const result = await db.transaction().execute(async (trx) => {
    await holdSetupLock(trx);
    if (await hasInstance(trx)) return null; // another process got there first
    const summary = await applyInTransaction(trx, bootstrap);
    const idAt = (path: string): string => {
      const found = summary.objects.find((object) => object.path === path);
      if (!found) throw new Error(`first run created nothing at ${path}`);
      return found.id;
    };
    const machineId = idAt('orgs[0].machines[0]');
    const owner = { instanceId: summary.instanceId, orgId: idAt('orgs[0]'), userId: machineId, creator: 'first-run' };
    const scopes = personalAccessTokenScopes(apiAudienceScope(options.serviceName));
    await addPersonalAccessToken(trx, owner, { id: pat.id, hash: pat.hash, expiresAt: patExpiry, scopes });
    return {
      instanceId: summary.instanceId,
      org: { id: idAt('orgs[0]'), name: ORG_NAME, domain },
      admin: { id: idAt('orgs[0].users[0]'), userName: ADMIN, loginName: `${ADMIN}@${domain}`, password },
      project: { id: idAt('orgs[0].projects[0]'), name: PROJECT },
      client: { id: idAt('orgs[0].projects[0].apps[0]'), clientId: CLIENT_ID, clientSecret, redirectUri: REDIRECT_URI },
      apiScope: apiAudienceScope(options.serviceName),
      pat: { userId: machineId, userName: API_MACHINE, tokenId: pat.id, path: options.patPath, expiresAt: patExpiry },
    };
  });
  if (result !== null) writeTokenFile(options.patPath, pat.token);
  return result;
}

/** A shell word: as is when it needs no quoting, else single-quoted. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The text to print once after a first run: where the issuer is, how to sign in, a ready authorize URL. */
export function printFirstRun(result: FirstRunResult, externalUrl: string): string {
  const base = externalUrl.replace(/\/+$/, '');
  const params: [string, string][] = [
    ['client_id', result.client.clientId],
    ['redirect_uri', result.client.redirectUri],
    ['response_type', 'code'],
    ['scope', 'openid profile email'],
    ['state', randomToken(12)],
  ];
  const query = params.map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join('&');
  return [
    '',
    'Gatehouse first run: created a default organization, an admin user, a demo client and an API token.',
    'The password and the client secret below are shown only this once (only their hashes are stored).',
    '',
    `  issuer             ${base}`,
    `  discovery          ${base}/.well-known/openid-configuration`,
    `  organization       ${result.org.name} (domain ${result.org.domain})`,
    '',
    `  admin login        ${result.admin.loginName}  (or "${result.admin.userName}")`,
    `  admin password     ${result.admin.password}`,
    '',
    `  demo client        project "${result.project.name}", client_secret_basic`,
    `  client_id          ${result.client.clientId}`,
    `  client_secret      ${result.client.clientSecret}`,
    `  redirect_uri       ${result.client.redirectUri}`,
    '',
    '  sign in as the admin through the demo client:',
    `  ${base}/oauth/v2/authorize?${query}`,
    '',
    `  API: a personal access token of the machine user "${result.pat.userName}" (IAM_OWNER), valid until`,
    `  ${result.pat.expiresAt.toISOString()}, is in ${result.pat.path} (readable by this account only).`,
    '  List the organizations with it:',
    `  curl -s -X POST ${base}/v2/organizations/_search -H "Authorization: Bearer $(cat ${shellWord(result.pat.path)})" -H 'Content-Type: application/json' -d '{}'`,
    '',
    `  Tokens from the OAuth endpoints need the scope ${result.apiScope} for the API.`,
    '',
  ].join('\n');
}
