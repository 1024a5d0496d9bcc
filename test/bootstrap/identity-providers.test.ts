/**
 * `identityProviders` and `loginPolicy.idps` in the bootstrap file (docs/bootstrap.md#identity-providers):
 * validated before anything is written, applied as declared (matched by name among the owner's
 * providers, the secret sealed with the master key), activated in the login policies by name or id,
 * and applied again without a change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { applyBootstrap, type ApplyOptions } from '../../src/bootstrap/apply.ts';
import { BootstrapError, parseBootstrap } from '../../src/bootstrap/schema.ts';
import { bootstrapProblems } from '../support/bootstrap-problems.ts';
import { activeProviders, listProviders, loginPolicyProviders, upstreamConfigOf } from '../../src/domain/federation/providers.ts';
import { MasterKey } from '../../src/domain/kernel/crypto.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const HOME = '100000000000000201';
const CORP = '100000000000000202';
const OTHER = '100000000000000203';
const masterKey = new MasterKey(Buffer.alloc(32, 9).toString('base64'));

let dir: string;
let file: string;

function document(edit: (doc: Record<string, any>) => void = () => {}): string { // eslint-disable-line @typescript-eslint/no-explicit-any -- edited freely
  const doc: Record<string, any> = { // eslint-disable-line @typescript-eslint/no-explicit-any
    identityProviders: [
      {
        kind: 'oidc', name: 'Google', issuer: 'https://accounts.google.com', clientId: 'g-client', clientSecret: 'g-secret',
        scopes: ['openid', 'email'], providerOptions: { isCreationAllowed: true, autoLinking: 'AUTO_LINKING_OPTION_EMAIL' }, usePkce: true,
      },
    ],
    loginPolicy: { allowExternalIdp: true, idps: ['Google'] },
    orgs: [
      { id: HOME, name: 'Home', domain: 'home.test' },
      {
        id: CORP,
        name: 'Corp',
        domain: 'corp.test',
        identityProviders: [
          {
            kind: 'oauth', name: 'Corp SSO', clientId: 'corp', clientSecret: 'corp-secret', authorizationEndpoint: 'https://sso.corp.test/authorize',
            tokenEndpoint: 'https://sso.corp.test/token', userEndpoint: 'https://sso.corp.test/me', idAttribute: 'uid', providerOptions: { isAutoCreation: true },
          },
        ],
        loginPolicy: { allowExternalIdp: true, idps: ['Corp SSO', 'Google'] },
      },
      { id: OTHER, name: 'Other', domain: 'other.test' },
    ],
  };
  edit(doc);
  return stringify(doc);
}

const problems = (text: string) => bootstrapProblems(text, file);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-idps-'));
  file = path.join(dir, 'bootstrap.yaml');
});

describe('validation', () => {
  it('reads providers of the instance and of organizations, and the policies\' lists', () => {
    const { document: read } = parseBootstrap(document(), file);
    expect(read.identityProviders).toEqual([expect.objectContaining({
      path: 'identityProviders[0]',
      input: expect.objectContaining({ kind: 'oidc', name: 'Google', issuer: 'https://accounts.google.com', options: expect.objectContaining({ isCreationAllowed: true, autoLinking: 'email' }) }),
    })]);
    expect(read.orgs[1]?.identityProviders[0]?.input).toMatchObject({ kind: 'oauth', idAttribute: 'uid', options: { isAutoCreation: true, autoLinking: 'none' } });
    expect(read.orgs[1]?.loginPolicy?.idps).toEqual(['Corp SSO', 'Google']);
    expect(read.loginPolicy?.values).toEqual({ allowExternalIdp: true });
  });

  it.each([
    ['a provider without a kind', (doc: any) => delete doc.identityProviders[0].kind, 'identityProviders[0].kind', /is required/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an unknown kind', (doc: any) => (doc.identityProviders[0].kind = 'saml'), 'identityProviders[0].kind', /must be one of "oidc", "oauth"/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an OAuth provider without idAttribute', (doc: any) => delete doc.orgs[1].identityProviders[0].idAttribute, 'orgs[1].identityProviders[0].idAttribute', /is required/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an OpenID key on an OAuth provider', (doc: any) => (doc.orgs[1].identityProviders[0].issuer = 'https://x.test'), 'orgs[1].identityProviders[0].issuer', /unknown key/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an unknown auto-linking option', (doc: any) => (doc.identityProviders[0].providerOptions.autoLinking = 'EMAIL'), 'identityProviders[0].providerOptions.autoLinking', /must be one of/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['two providers of one name', (doc: any) => doc.identityProviders.push({ ...doc.identityProviders[0] }), 'identityProviders[1].name', /names of identity providers are unique per owner/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a provider named twice in a policy', (doc: any) => (doc.loginPolicy.idps = ['Google', 'Google']), 'loginPolicy.idps[1]', /duplicates/], // eslint-disable-line @typescript-eslint/no-explicit-any
  ])('reports %s at its path', (_what, edit, at, message) => {
    const error = problems(document(edit));
    expect(error.issues).toEqual([expect.objectContaining({ file, path: at, message: expect.stringMatching(message) })]);
  });
});

describe('applying', () => {
  let database: FreshDatabase;
  let db: DB;
  beforeAll(async () => {
    database = await freshDatabase();
    db = database.db;
  }, 120_000);
  afterAll(() => database.close());

  const options: ApplyOptions = { masterKey };
  const apply = (text: string, with_: ApplyOptions = options) => applyBootstrap(db, parseBootstrap(text, file), with_);
  const last = async () => (await db.selectFrom('events').select('sequence').orderBy('sequence', 'desc').limit(1).executeTakeFirst())?.sequence ?? '0';
  const refusal = async (text: string, with_: ApplyOptions = options) => {
    try {
      await apply(text, with_);
    } catch (error) {
      if (error instanceof BootstrapError) return error.issues;
      throw error;
    }
    throw new Error('the file was applied');
  };

  it('refuses providers without the master key, before writing anything', async () => {
    const issues = await refusal(document(), {});
    expect(issues).toEqual([expect.objectContaining({ path: 'identityProviders[0]', message: expect.stringContaining('need the master key') })]);
    expect(await db.selectFrom('instances').select('id').execute()).toEqual([]);
  });

  it('adds the providers, seals their secrets, activates them, and changes nothing when applied again', async () => {
    const summary = await apply(document());
    const instanceId = summary.instanceId;
    expect(summary.byKind.idp).toEqual({ created: 2, updated: 0, unchanged: 0 });

    const [google] = await listProviders(db, { instanceId }, false);
    expect(google).toMatchObject({ name: 'Google', kind: 'oidc', orgId: null, scopes: ['openid', 'email'], usePkce: true });
    expect(google!.sealedSecret).not.toContain('g-secret');
    expect(upstreamConfigOf(google!, masterKey).clientSecret).toBe('g-secret');
    const [corp] = await listProviders(db, { instanceId, orgId: CORP }, false);
    expect(corp).toMatchObject({ name: 'Corp SSO', kind: 'oauth', orgId: CORP, idAttribute: 'uid' });

    // The instance's list serves every organization without a policy of its own; Corp has its own.
    expect((await loginPolicyProviders(db, { instanceId })).map((l) => l.name)).toEqual(['Google']);
    expect((await activeProviders(db, instanceId, OTHER)).map((p) => p.name)).toEqual(['Google']);
    expect((await activeProviders(db, instanceId, CORP)).map((p) => p.name)).toEqual(['Corp SSO', 'Google']);

    const before = await last();
    const again = await apply(document());
    expect({ created: again.created, updated: again.updated }).toEqual({ created: 0, updated: 0 });
    expect(again.byKind.idp).toEqual({ created: 0, updated: 0, unchanged: 2 });
    expect(await last()).toBe(before);
  });

  it('changes what the file changes: a new secret, options, the lists; a secret left out is kept', async () => {
    const changed = await apply(document((doc) => {
      doc.identityProviders[0].clientSecret = 'g-secret-2';
      doc.orgs[1].identityProviders[0].providerOptions = { isAutoCreation: false, isLinkingAllowed: true };
      delete doc.orgs[1].identityProviders[0].clientSecret;
      doc.orgs[1].loginPolicy.idps = [doc.orgs[1].identityProviders[0].name];
    }));
    expect(changed.byKind.idp).toEqual({ created: 0, updated: 2, unchanged: 0 });
    const instanceId = changed.instanceId;
    const [google] = await listProviders(db, { instanceId }, false);
    expect(upstreamConfigOf(google!, masterKey).clientSecret).toBe('g-secret-2');
    const [corp] = await listProviders(db, { instanceId, orgId: CORP }, false);
    expect(corp!.options).toMatchObject({ isAutoCreation: false, isLinkingAllowed: true });
    expect(upstreamConfigOf(corp!, masterKey).clientSecret).toBe('corp-secret');
    expect((await activeProviders(db, instanceId, CORP)).map((p) => p.name)).toEqual(['Corp SSO']);

    // By id works as well as by name.
    await apply(document((doc) => {
      doc.identityProviders[0].clientSecret = 'g-secret-2';
      delete doc.orgs[1].identityProviders[0].clientSecret;
      doc.orgs[1].identityProviders[0].providerOptions = { isAutoCreation: false, isLinkingAllowed: true };
      doc.orgs[1].loginPolicy.idps = [google!.id];
    }));
    expect((await activeProviders(db, instanceId, CORP)).map((p) => p.name)).toEqual(['Google']);
  });

  it('reports what the federation wing refuses at the provider\'s path', async () => {
    const http = await refusal(document((doc) => (doc.identityProviders[0].issuer = 'http://accounts.google.com')));
    expect(http).toEqual([expect.objectContaining({ path: 'identityProviders[0]', message: 'issuer: must be an https URL' })]);
    const noSecret = await refusal(document((doc) => {
      doc.identityProviders.push({ kind: 'oidc', name: 'New', issuer: 'https://new.test', clientId: 'n' });
    }));
    expect(noSecret).toEqual([expect.objectContaining({ path: 'identityProviders[1]', message: 'clientSecret: must not be empty' })]);
    // Another organization's provider is not one Corp can offer.
    const foreign = await refusal(document((doc) => {
      doc.orgs[2].identityProviders = [{ ...doc.orgs[1].identityProviders[0], name: 'Other SSO' }];
      doc.orgs[1].loginPolicy.idps = ['Other SSO'];
    }));
    expect(foreign).toEqual([expect.objectContaining({ path: 'orgs[1].loginPolicy.idps[0]', message: expect.stringContaining('no identity provider named "Other SSO"') })]);
    const kind = await refusal(document((doc) => {
      doc.identityProviders[0] = { kind: 'oauth', name: 'Google', clientId: 'g', clientSecret: 's', authorizationEndpoint: 'https://a.test', tokenEndpoint: 'https://a.test', userEndpoint: 'https://a.test', idAttribute: 'id' };
    }));
    expect(kind).toEqual([expect.objectContaining({ path: 'identityProviders[0]', message: expect.stringContaining('exists with kind oidc') })]);
  });
});
