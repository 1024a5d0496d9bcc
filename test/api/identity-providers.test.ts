/**
 * External identity providers through ZITADEL's calls (docs/federation.md): a real server, tokens
 * from its token endpoint, clients built from ZITADEL's own descriptors (@zitadel/proto) over gRPC,
 * gRPC-web, Connect and REST. Instance providers through the admin calls, organization providers
 * through the management calls; activation in the login policy; the v2 reads. An organization
 * owner never reaches another organization's providers, and the client secret never leaves the
 * server: it is in no answer and sealed in the database.
 */
import { Code, createClient, type Transport } from '@connectrpc/connect';
import { AdminService } from '@zitadel/proto/zitadel/admin_pb.js';
import { AutoLinkingOption, IDPOwnerType, IDPType, ProviderType } from '@zitadel/proto/zitadel/idp_pb.js';
import { IdentityProviderService } from '@zitadel/proto/zitadel/idp/v2/idp_service_pb.js';
import { IDPType as IDPTypeV2 } from '@zitadel/proto/zitadel/idp/v2/idp_pb.js';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { TextQueryMethod } from '@zitadel/proto/zitadel/object_pb.js';
import { IdentityProviderType } from '@zitadel/proto/zitadel/settings/v2/login_settings_pb.js';
import { SettingsService } from '@zitadel/proto/zitadel/settings/v2/settings_service_pb.js';
import { ownProvider, upstreamConfigOf } from '../../src/domain/federation/providers.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, failure, managementDocument, MGMT, transports, type Caller } from '../support/management.ts';

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  // Without GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: only https to public (or unresolvable) hosts.
  server = await startTestServer(managementDocument());
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

const as = (caller: Caller, orgId?: string) => ({ headers: { authorization: `Bearer ${tokens[caller]}`, ...(orgId === undefined ? {} : { 'x-zitadel-orgid': orgId }) } });

/** Every string in an answer, as JSON (bigints as strings): what a client could ever read. */
const wire = (message: unknown) => JSON.stringify(message, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));

async function storedSecret(id: string): Promise<string> {
  const row = await server.running.gh.db.selectFrom('identity_providers').select('client_secret').where('id', '=', id).executeTakeFirstOrThrow();
  return row.client_secret;
}

const OPTIONS = { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: false, isAutoUpdate: true, autoLinking: AutoLinkingOption.EMAIL };

describe.each(transports(() => server))('over %s', (name, transport: () => Transport) => {
  const admin = () => createClient(AdminService, transport());
  const management = () => createClient(ManagementService, transport());
  const settings = () => createClient(SettingsService, transport());
  const idps = () => createClient(IdentityProviderService, transport());
  const secret = `s3cret-${name}-never-shown`;

  it('an instance owner adds, reads, changes and removes a generic OpenID provider; the secret stays sealed', async () => {
    const added = await admin().addGenericOIDCProvider({
      name: ` Acme SSO ${name} `, issuer: 'https://sso.acme.test', clientId: 'acme-client', clientSecret: secret,
      scopes: ['openid', 'profile', 'email'], providerOptions: OPTIONS, isIdTokenMapping: true, usePkce: true,
    }, as('iamAdmin'));
    expect(added.id).toMatch(/^\d+$/);
    expect(added.details).toMatchObject({ resourceOwner: server.running.gh.instanceId });
    expect(added.details?.sequence).toBeGreaterThan(0n);

    const got = await admin().getProviderByID({ id: added.id }, as('iamAdmin'));
    expect(got.idp).toMatchObject({
      id: added.id, name: `Acme SSO ${name}`, owner: IDPOwnerType.IDP_OWNER_TYPE_SYSTEM, type: ProviderType.OIDC,
      config: { options: OPTIONS, config: { case: 'oidc', value: { issuer: 'https://sso.acme.test', clientId: 'acme-client', scopes: ['openid', 'profile', 'email'], isIdTokenMapping: true, usePkce: true } } },
    });
    expect(wire(got)).not.toContain(secret);
    const sealed = await storedSecret(added.id);
    expect(sealed).not.toContain(secret);
    expect(server.running.gh.masterKey.decrypt(sealed)).toBe(secret);
    // What signing in at the provider gets: the secret unsealed, the rest as configured.
    const upstream = upstreamConfigOf(await ownProvider(server.running.gh.db, { instanceId: server.running.gh.instanceId }, added.id), server.running.gh.masterKey);
    expect(upstream).toEqual({
      kind: 'oidc', id: added.id, name: `Acme SSO ${name}`, issuer: 'https://sso.acme.test', clientId: 'acme-client', clientSecret: secret,
      scopes: ['openid', 'profile', 'email'], idTokenMapping: true, usePkce: true,
    });

    const listed = await admin().listProviders({ queries: [{ query: { case: 'idpNameQuery', value: { name: `acme sso ${name}`, method: TextQueryMethod.EQUALS_IGNORE_CASE } } }] }, as('iamAdmin'));
    expect(listed.result.map((p) => p.id)).toEqual([added.id]);
    expect(listed.details?.totalResult).toBe(1n);
    expect(wire(listed)).not.toContain(secret);

    // An empty secret keeps the stored one ("updated only if provided").
    await admin().updateGenericOIDCProvider({ id: added.id, name: `Acme ${name}`, issuer: 'https://login.acme.test', clientId: 'acme-2', scopes: [], providerOptions: {} }, as('iamAdmin'));
    expect((await admin().getProviderByID({ id: added.id }, as('iamAdmin'))).idp).toMatchObject({
      name: `Acme ${name}`, config: { options: { isLinkingAllowed: false, autoLinking: AutoLinkingOption.UNSPECIFIED }, config: { value: { issuer: 'https://login.acme.test', clientId: 'acme-2', usePkce: false } } },
    });
    expect(server.running.gh.masterKey.decrypt(await storedSecret(added.id))).toBe(secret);
    await admin().updateGenericOIDCProvider({ id: added.id, name: `Acme ${name}`, issuer: 'https://login.acme.test', clientId: 'acme-2', clientSecret: `${secret}-2` }, as('iamAdmin'));
    expect(server.running.gh.masterKey.decrypt(await storedSecret(added.id))).toBe(`${secret}-2`);
    // The same values again: nothing changes, and the answer is still OK (as ZITADEL's).
    const same = await admin().updateGenericOIDCProvider({ id: added.id, name: `Acme ${name}`, issuer: 'https://login.acme.test', clientId: 'acme-2', clientSecret: `${secret}-2` }, as('iamAdmin'));
    expect(same.details?.resourceOwner).toBe(server.running.gh.instanceId);
    // An OpenID provider is not changed through the OAuth call.
    expect((await failure(admin().updateGenericOAuthProvider({ id: added.id, name: 'x', clientId: 'x', authorizationEndpoint: 'https://a.test', tokenEndpoint: 'https://a.test', userEndpoint: 'https://a.test', idAttribute: 'id' }, as('iamAdmin')))).code).toBe(Code.NotFound);

    await admin().deleteProvider({ id: added.id }, as('iamAdmin'));
    expect((await failure(admin().getProviderByID({ id: added.id }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(admin().deleteProvider({ id: added.id }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(admin().listProviders({}, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
  });

  it('an organization owner manages its own providers and sees the instance\'s, never another organization\'s', async () => {
    const instanceIdp = await admin().addGenericOIDCProvider({ name: `Instance ${name}`, issuer: 'https://sso.acme.test', clientId: 'i', clientSecret: secret }, as('iamAdmin'));
    const own = await management().addGenericOAuthProvider({
      name: `Own ${name}`, clientId: 'own-client', clientSecret: secret, authorizationEndpoint: 'https://oauth.acme.test/authorize',
      tokenEndpoint: 'https://oauth.acme.test/token', userEndpoint: 'https://oauth.acme.test/user', scopes: ['read:user'], idAttribute: 'id', usePkce: true,
    }, as('orgAdmin'));
    expect(own.details?.resourceOwner).toBe(MGMT.org);
    expect(wire(await management().getProviderByID({ id: own.id }, as('orgAdmin')))).not.toContain(secret);
    expect((await management().getProviderByID({ id: own.id }, as('orgAdmin'))).idp).toMatchObject({
      owner: IDPOwnerType.IDP_OWNER_TYPE_ORG, type: ProviderType.OAUTH,
      config: { config: { case: 'oauth', value: { clientId: 'own-client', tokenEndpoint: 'https://oauth.acme.test/token', idAttribute: 'id', usePkce: true, scopes: ['read:user'] } } },
    });

    // The organization's list: its own and the instance's.
    const listed = await management().listProviders({}, as('orgAdmin'));
    expect(listed.result.map((p) => p.id)).toEqual(expect.arrayContaining([own.id, instanceIdp.id]));
    const onlyOwn = await management().listProviders({ queries: [{ query: { case: 'ownerTypeQuery', value: { ownerType: IDPOwnerType.IDP_OWNER_TYPE_ORG } } }] }, as('orgAdmin'));
    expect(onlyOwn.result.every((p) => p.owner === IDPOwnerType.IDP_OWNER_TYPE_ORG)).toBe(true);
    expect(onlyOwn.result.map((p) => p.id)).toContain(own.id);
    // The instance's list does not have the organization's.
    expect((await admin().listProviders({}, as('iamAdmin'))).result.map((p) => p.id)).not.toContain(own.id);

    // An instance provider is not the organization's to read, change or remove through management.
    expect((await failure(management().getProviderByID({ id: instanceIdp.id }, as('orgAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(management().updateGenericOIDCProvider({ id: instanceIdp.id, name: 'taken', issuer: 'https://sso.acme.test', clientId: 'i' }, as('orgAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(management().deleteProvider({ id: instanceIdp.id }, as('orgAdmin')))).code).toBe(Code.NotFound);

    // Another organization's owner: not found in its own organization, denied when naming this one.
    const other = management();
    expect((await other.listProviders({}, as('otherAdmin'))).result.map((p) => p.id)).not.toContain(own.id);
    expect((await failure(other.getProviderByID({ id: own.id }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(other.updateGenericOAuthProvider({
      id: own.id, name: 'stolen', clientId: 'x', authorizationEndpoint: 'https://evil.test', tokenEndpoint: 'https://evil.test', userEndpoint: 'https://evil.test', idAttribute: 'id',
    }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(other.deleteProvider({ id: own.id }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(other.getProviderByID({ id: own.id }, as('otherAdmin', MGMT.org)))).code).toBe(Code.PermissionDenied);
    expect((await failure(other.listProviders({}, as('otherAdmin', MGMT.org)))).code).toBe(Code.PermissionDenied);
    expect((await failure(idps().getIDPByID({ id: own.id }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(idps().getIDPByID({ id: own.id }, as('plain')))).code).toBe(Code.PermissionDenied);

    // The v2 read: the organization's own and the instance's, never the secret.
    const v2 = await idps().getIDPByID({ id: own.id }, as('orgAdmin'));
    expect(v2.idp).toMatchObject({ id: own.id, type: IDPTypeV2.IDP_TYPE_OAUTH, config: { config: { case: 'oauth', value: { idAttribute: 'id' } } } });
    expect(wire(v2)).not.toContain(secret);
    expect((await idps().getIDPByID({ id: instanceIdp.id }, as('orgAdmin'))).idp?.type).toBe(IDPTypeV2.IDP_TYPE_OIDC);
    expect((await idps().getIDPByID({ id: own.id }, as('iamAdmin'))).idp?.name).toBe(`Own ${name}`);

    await management().deleteProvider({ id: own.id }, as('orgAdmin'));
    await admin().deleteProvider({ id: instanceIdp.id }, as('iamAdmin'));
  });

  it('a login policy offers the providers it lists, and the settings read shows them', async () => {
    const instanceIdp = await admin().addGenericOIDCProvider({ name: `Shared ${name}`, issuer: 'https://sso.acme.test', clientId: 'i', clientSecret: secret, providerOptions: { isCreationAllowed: true } }, as('iamAdmin'));
    const own = await management().addGenericOIDCProvider({ name: `Corp ${name}`, issuer: 'https://corp.acme.test', clientId: 'c', clientSecret: secret, providerOptions: { isAutoCreation: true, autoLinking: AutoLinkingOption.USERNAME } }, as('orgAdmin'));
    const foreign = await management().addGenericOIDCProvider({ name: `Foreign ${name}`, issuer: 'https://corp.acme.test', clientId: 'f', clientSecret: secret }, as('otherAdmin'));

    // Without a login policy of its own, the organization cannot list providers (ZITADEL: NotFound).
    expect((await failure(management().addIDPToLoginPolicy({ idpId: own.id }, as('orgAdmin')))).code).toBe(Code.NotFound);
    // Another organization's provider is never offered.
    expect((await failure(management().addCustomLoginPolicy({ allowUsernamePassword: true, allowExternalIdp: true, idps: [{ idpId: foreign.id }] }, as('orgAdmin')))).code).toBe(Code.NotFound);
    await management().addCustomLoginPolicy({ allowUsernamePassword: true, allowExternalIdp: true, idps: [{ idpId: own.id, ownerType: IDPOwnerType.IDP_OWNER_TYPE_ORG }] }, as('orgAdmin'));
    await management().addIDPToLoginPolicy({ idpId: instanceIdp.id, ownerType: IDPOwnerType.IDP_OWNER_TYPE_SYSTEM }, as('orgAdmin'));
    expect((await failure(management().addIDPToLoginPolicy({ idpId: instanceIdp.id }, as('orgAdmin')))).code).toBe(Code.AlreadyExists);
    expect((await failure(management().addIDPToLoginPolicy({ idpId: foreign.id }, as('orgAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(management().addIDPToLoginPolicy({ idpId: own.id }, as('otherAdmin', MGMT.org)))).code).toBe(Code.PermissionDenied);

    const links = await management().listLoginPolicyIDPs({}, as('orgAdmin'));
    expect(links.result).toEqual(expect.arrayContaining([
      expect.objectContaining({ idpId: own.id, idpName: `Corp ${name}`, idpType: IDPType.IDP_TYPE_OIDC }),
      expect.objectContaining({ idpId: instanceIdp.id, idpName: `Shared ${name}` }),
    ]));
    expect((await management().getLoginPolicy({}, as('orgAdmin'))).policy?.idps.map((l) => l.idpId).sort()).toEqual([own.id, instanceIdp.id].sort());

    const active = await settings().getActiveIdentityProviders({ ctx: { resourceOwner: { case: 'orgId', value: MGMT.org } } }, as('orgAdmin'));
    expect(active.identityProviders.map((p) => p.id).sort()).toEqual([own.id, instanceIdp.id].sort());
    expect(active.identityProviders.find((p) => p.id === own.id)).toMatchObject({ name: `Corp ${name}`, type: IdentityProviderType.OIDC, options: { isAutoCreation: true } });
    const creating = await settings().getActiveIdentityProviders({ creationAllowed: true }, as('orgAdmin'));
    expect(creating.identityProviders.map((p) => p.id)).toEqual([instanceIdp.id]);
    const linking = await settings().getActiveIdentityProviders({ autoLinking: true }, as('orgAdmin'));
    expect(linking.identityProviders.map((p) => p.id)).toEqual([own.id]);
    expect(linking.details?.totalResult).toBe(1n);
    // The other organization (the instance's policy, listing nothing) is offered none.
    expect((await settings().getActiveIdentityProviders({}, as('otherAdmin'))).identityProviders).toEqual([]);

    // Without allowExternalIdp nothing is offered, though the list stays.
    await management().updateCustomLoginPolicy({ allowUsernamePassword: true, allowExternalIdp: false }, as('orgAdmin'));
    expect((await settings().getActiveIdentityProviders({}, as('orgAdmin'))).identityProviders).toEqual([]);
    await management().updateCustomLoginPolicy({ allowUsernamePassword: true, allowExternalIdp: true }, as('orgAdmin'));

    // Removing a provider takes it off every list.
    await management().removeIDPFromLoginPolicy({ idpId: instanceIdp.id }, as('orgAdmin'));
    expect((await failure(management().removeIDPFromLoginPolicy({ idpId: instanceIdp.id }, as('orgAdmin')))).code).toBe(Code.NotFound);
    await management().deleteProvider({ id: own.id }, as('orgAdmin'));
    expect((await management().listLoginPolicyIDPs({}, as('orgAdmin'))).result).toEqual([]);

    // The instance's list, through the admin calls.
    await admin().addIDPToLoginPolicy({ idpId: instanceIdp.id }, as('iamAdmin'));
    expect((await admin().listLoginPolicyIDPs({}, as('iamAdmin'))).result.map((l) => l.idpId)).toEqual([instanceIdp.id]);
    expect((await admin().getLoginPolicy({}, as('iamAdmin'))).policy?.idps.map((l) => l.idpId)).toEqual([instanceIdp.id]);
    expect((await failure(admin().addIDPToLoginPolicy({ idpId: foreign.id }, as('iamAdmin')))).code).toBe(Code.NotFound);
    // An organization without its own policy reads the instance's list.
    expect((await management().listLoginPolicyIDPs({}, as('otherAdmin'))).result.map((l) => l.idpId)).toEqual([instanceIdp.id]);
    await admin().deleteProvider({ id: instanceIdp.id }, as('iamAdmin'));
    expect((await admin().listLoginPolicyIDPs({}, as('iamAdmin'))).result).toEqual([]);

    await management().resetLoginPolicyToDefault({}, as('orgAdmin'));
    await management().deleteProvider({ id: foreign.id }, as('otherAdmin'));
  });

  it('other provider kinds answer Unimplemented', async () => {
    const jwt = await failure(admin().addJWTProvider({ name: 'jwt', issuer: 'https://sso.acme.test', jwtEndpoint: 'https://sso.acme.test/jwt', keysEndpoint: 'https://sso.acme.test/keys', headerName: 'x' }, as('iamAdmin')));
    expect(jwt.code).toBe(Code.Unimplemented);
    expect((await failure(management().addGoogleProvider({ name: 'g', clientId: 'g', clientSecret: 'g' }, as('orgAdmin')))).code).toBe(Code.Unimplemented);
    expect((await failure(management().addLDAPProvider({ name: 'l' }, as('orgAdmin')))).code).toBe(Code.Unimplemented);
    expect((await failure(admin().addSAMLProvider({ name: 's' }, as('iamAdmin')))).code).toBe(Code.Unimplemented);
  });
});

describe('bad input', () => {
  const [, transport] = transports(() => server)[2]!;
  const admin = () => createClient(AdminService, transport());
  const management = () => createClient(ManagementService, transport());
  const oidc = { name: 'Acme', issuer: 'https://sso.acme.test', clientId: 'c', clientSecret: 's' };
  const oauth = { name: 'Acme', clientId: 'c', clientSecret: 's', authorizationEndpoint: 'https://a.acme.test/authorize', tokenEndpoint: 'https://a.acme.test/token', userEndpoint: 'https://a.acme.test/user', idAttribute: 'id' };

  it.each([
    ['an empty name', { ...oidc, name: '  ' }, 'name: must not be empty'],
    ['a malformed issuer', { ...oidc, issuer: 'sso.acme.test' }, 'issuer: must be an absolute URL'],
    ['an http issuer', { ...oidc, issuer: 'http://sso.acme.test' }, 'issuer: must be an https URL'],
    ['a loopback issuer', { ...oidc, issuer: 'https://127.0.0.1:8443' }, 'issuer: resolves to a loopback address'],
    ['a private issuer', { ...oidc, issuer: 'https://10.1.2.3' }, 'issuer: resolves to a private address'],
    ['an issuer with credentials', { ...oidc, issuer: 'https://user:pw@sso.acme.test' }, 'issuer: must not contain'],
    ['no client id', { ...oidc, clientId: '' }, 'clientId: must not be empty'],
    ['no secret', { ...oidc, clientSecret: '' }, 'clientSecret: must not be empty'],
    ['21 scopes', { ...oidc, scopes: Array.from({ length: 21 }, (_, i) => `s${i}`) }, 'scopes: must have at most 20 items'],
    ['an empty scope', { ...oidc, scopes: ['openid', ''] }, 'scopes[1]: must be 1 to 100 characters'],
    ['a long name', { ...oidc, name: 'n'.repeat(201) }, 'name: must be at most 200 characters'],
  ])('refuses an OpenID provider with %s', async (_what, request, message) => {
    const refused = await failure(admin().addGenericOIDCProvider(request, as('iamAdmin')));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message).toContain(message);
  });

  it.each([
    ['no idAttribute', { ...oauth, idAttribute: ' ' }, 'idAttribute: must not be empty'],
    ['a loopback token endpoint', { ...oauth, tokenEndpoint: 'https://[::1]/token' }, 'tokenEndpoint: resolves to a loopback address'],
    ['an ftp user endpoint', { ...oauth, userEndpoint: 'ftp://a.acme.test/user' }, 'userEndpoint: must be an https URL'],
    ['an unknown auto-linking option', { ...oauth, providerOptions: { autoLinking: 7 } }, 'providerOptions.autoLinking'],
  ])('refuses an OAuth provider with %s', async (_what, request, message) => {
    const refused = await failure(management().addGenericOAuthProvider(request, as('orgAdmin')));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message).toContain(message);
  });

  it('answers NotFound for unknown ids, and checks an update as an add (but the secret)', async () => {
    expect((await failure(admin().getProviderByID({ id: '999' }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(admin().getProviderByID({ id: '' }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(admin().updateGenericOIDCProvider({ id: '999', ...oidc }, as('iamAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(management().removeIDPFromLoginPolicy({ idpId: '999' }, as('orgAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(admin().addIDPToLoginPolicy({ idpId: '999' }, as('iamAdmin')))).code).toBe(Code.NotFound);
    const added = await admin().addGenericOIDCProvider(oidc, as('iamAdmin'));
    const refused = await failure(admin().updateGenericOIDCProvider({ id: added.id, ...oidc, issuer: 'http://sso.acme.test' }, as('iamAdmin')));
    expect(refused).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining('issuer: must be an https URL') });
    await admin().deleteProvider({ id: added.id }, as('iamAdmin'));
  });
});

describe('REST', () => {
  async function call(method: string, path: string, caller: Caller, body?: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...as(caller).headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  }

  it('serves ZITADEL\'s paths under /admin/v1, /management/v1 and /v2', async () => {
    const added = await call('POST', '/admin/v1/idps/generic_oidc', 'iamAdmin', {
      name: 'Acme SSO', issuer: 'https://sso.acme.example', clientId: 'gh-123', clientSecret: 'rest-secret-value', scopes: ['openid', 'profile', 'email'],
      providerOptions: { isLinkingAllowed: true, isCreationAllowed: true, isAutoCreation: true, isAutoUpdate: true, autoLinking: 'AUTO_LINKING_OPTION_EMAIL' }, isIdTokenMapping: false, usePkce: true,
    });
    expect(added).toMatchObject({ status: 200, json: { details: { resourceOwner: server.running.gh.instanceId } } });
    const id = String(added.json['id']);
    const got = await call('GET', `/admin/v1/idps/templates/${id}`, 'iamAdmin');
    expect(got).toMatchObject({ status: 200, json: { idp: { id, owner: 'IDP_OWNER_TYPE_SYSTEM', type: 'PROVIDER_TYPE_OIDC', config: { options: { autoLinking: 'AUTO_LINKING_OPTION_EMAIL' }, oidc: { issuer: 'https://sso.acme.example' } } } } });
    expect(got.text).not.toContain('rest-secret-value');
    expect((await call('PUT', `/admin/v1/idps/generic_oidc/${id}`, 'iamAdmin', { name: 'Acme', issuer: 'https://sso.acme.example', clientId: 'gh-123' })).status).toBe(200);
    const listed = await call('POST', '/management/v1/idps/templates/_search', 'orgAdmin', {});
    expect(listed.status).toBe(200);
    expect(listed.text).toContain(id);
    expect(listed.text).not.toContain('rest-secret-value');
    expect(await call('GET', `/v2/idps/${id}`, 'orgAdmin')).toMatchObject({ status: 200, json: { idp: { id, type: 'IDP_TYPE_OIDC' } } });
    expect((await call('POST', '/admin/v1/policies/login/idps', 'iamAdmin', { idpId: id })).status).toBe(200);
    expect(await call('POST', '/admin/v1/policies/login/idps/_search', 'iamAdmin', {})).toMatchObject({ status: 200, json: { result: [{ idpId: id, idpName: 'Acme', idpType: 'IDP_TYPE_OIDC' }] } });
    expect(await call('GET', '/v2/settings/login/idps?ctx.instance=true', 'iamAdmin')).toMatchObject({ status: 200, json: { identityProviders: [{ id, type: 'IDENTITY_PROVIDER_TYPE_OIDC' }] } });
    expect((await call('DELETE', `/admin/v1/policies/login/idps/${id}`, 'iamAdmin')).status).toBe(200);
    const bad = await call('POST', '/management/v1/idps/oauth', 'orgAdmin', { name: 'x', clientId: 'x', clientSecret: 'x', authorizationEndpoint: 'https://a.test', tokenEndpoint: 'https://a.test', userEndpoint: 'https://a.test' });
    expect(bad.status).toBe(400);
    expect(String(bad.json['message'])).toContain('idAttribute: must not be empty');
    expect((await call('DELETE', `/admin/v1/idps/templates/${id}`, 'iamAdmin')).status).toBe(200);
    expect((await call('GET', `/admin/v1/idps/templates/${id}`, 'iamAdmin')).status).toBe(404);
    // Other kinds have no route: ZITADEL's paths for them are unknown here.
    expect((await call('POST', '/admin/v1/idps/generic_jwt', 'iamAdmin', { name: 'jwt' })).status).toBe(404);
  });
});

describe('with GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS', () => {
  let lab: TestServer;
  let labTokens: Record<Caller, string>;
  beforeAll(async () => {
    lab = await startTestServer(managementDocument(), { GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' });
    labTokens = await apiTokens(lab);
  });
  afterAll(() => lab.stop());

  it('accepts http and local addresses, for development and tests', async () => {
    const [, transport] = transports(() => lab)[2]!;
    const admin = createClient(AdminService, transport());
    const auth = { headers: { authorization: `Bearer ${labTokens.iamAdmin}` } };
    const added = await admin.addGenericOIDCProvider({ name: 'Local', issuer: 'http://127.0.0.1:9999', clientId: 'c', clientSecret: 's' }, auth);
    expect((await admin.getProviderByID({ id: added.id }, auth)).idp?.config?.config.value).toMatchObject({ issuer: 'http://127.0.0.1:9999' });
    // Still a URL, and never one with credentials.
    expect((await failure(admin.addGenericOIDCProvider({ name: 'Local', issuer: 'file:///etc/passwd', clientId: 'c', clientSecret: 's' }, auth))).code).toBe(Code.InvalidArgument);
  });
});
