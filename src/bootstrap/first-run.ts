/**
 * First run (docs/bootstrap.md#how-a-file-is-applied): on a database without an instance, and
 * without a bootstrap file, create a default organization, an admin user and a demo client, and
 * hand back their random password and secret once so the caller can print them. Safe when several
 * processes start at once on one PostgreSQL: the set-up lock serializes them and the loser finds
 * the instance already there.
 */
import { isIP } from 'node:net';
import { apiAudienceScope } from '../config/index.ts';
import { randomToken } from '../domain/kernel/ids.ts';
import { holdSetupLock } from '../domain/instance/instance-admin.ts';
import type { DB } from '../store/database.ts';
import { findFirstInstance } from '../store/instances.ts';
import { applyInTransaction } from './apply.ts';
import { validateBootstrap } from './schema.ts';

export interface FirstRunOptions {
  /** {base_url}: the issuer; its host names the default organization's domain. */
  externalUrl: string;
  /** `<service>` of the reserved API audience scope, printed for API callers. */
  serviceName: string;
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
}

const ORG_NAME = 'Gatehouse';
const ADMIN = 'admin';
const PROJECT = 'Demo';
const CLIENT_ID = 'demo-web';
const REDIRECT_URI = 'http://localhost:3000/callback';

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
  return db.transaction().execute(async (trx) => {
    await holdSetupLock(trx);
    if (await hasInstance(trx)) return null; // another process got there first
    const summary = await applyInTransaction(trx, bootstrap);
    const idAt = (path: string): string => {
      const found = summary.objects.find((object) => object.path === path);
      if (!found) throw new Error(`first run created nothing at ${path}`);
      return found.id;
    };
    return {
      instanceId: summary.instanceId,
      org: { id: idAt('orgs[0]'), name: ORG_NAME, domain },
      admin: { id: idAt('orgs[0].users[0]'), userName: ADMIN, loginName: `${ADMIN}@${domain}`, password },
      project: { id: idAt('orgs[0].projects[0]'), name: PROJECT },
      client: { id: idAt('orgs[0].projects[0].apps[0]'), clientId: CLIENT_ID, clientSecret, redirectUri: REDIRECT_URI },
      apiScope: apiAudienceScope(options.serviceName),
    };
  });
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
    'Gatehouse first run: created a default organization, an admin user and a demo client.',
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
    `  API calls need the scope ${result.apiScope} as well.`,
    '',
  ].join('\n');
}
