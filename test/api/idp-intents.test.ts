/**
 * Identity provider intents and links through ZITADEL's user.v2 calls (docs/federation.md#the-intent-calls,
 * docs/federation.md#links): a real server with a real upstream (node-oidc-provider), driven through
 * its login forms to the server's own /idps/callback; clients built from ZITADEL's descriptors
 * (@zitadel/proto) over gRPC, gRPC-web, Connect and REST. An intent answers once to the holder of its
 * token, and an organization owner never reaches another organization's providers or users.
 *
 * The published @zitadel/proto 1.3.1 has no `user_action` oneof in RetrieveIdentityProviderIntent's
 * answer yet (a client built from it keeps those fields as unknown), so the calls that read
 * `create_user` and `update_user` over the binary protocols use our generated descriptors, whose
 * field numbers the wire test holds to ZITADEL's.
 */
import { Code, createClient, type Client } from '@connectrpc/connect';
import { AdminService } from '@zitadel/proto/zitadel/admin_pb.js';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { AuthenticationMethodType, UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { UserService as UserServiceWithUserAction } from '../../gen/zitadel/user/v2/user_service_pb.js';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, failure, managementDocument, MGMT, rest, transports, type Caller } from '../support/management.ts';
import { authorizeAtOidcProvider, startOidcUpstream, UPSTREAM_CLIENTS, type OidcUpstream } from '../support/upstreams.ts';

const SUCCESS = 'https://login.example.com/idp/success';
const FAILURE = 'https://login.example.com/idp/failure';
/** Humans of `org`: one per protocol for the link calls, one without a password. */
const linkUser = (i: number) => `24100000000000000${i}`;
const PASSWORDLESS = '241000000000000009';

let server: TestServer;
let tokens: Record<Caller, string>;
let upstream: OidcUpstream;
let users: Client<typeof UserService>;
/** The organization's OpenID provider, the instance's plain OAuth provider, and another organization's provider. */
let orgIdp: string;
let instanceOauthIdp: string;
let otherIdp: string;

const as = (caller: Caller) => ({ headers: { authorization: `Bearer ${tokens[caller]}` } });
const callbackUrl = () => `${server.url}/idps/callback`;

beforeAll(async () => {
  server = await startTestServer(
    managementDocument({
      users: [
        ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: linkUser(i), userName: `linked-${i}`, password: 'Correct-Horse-9', email: `linked-${i}@managed.test`, emailVerified: true, givenName: 'L', familyName: String(i) })),
        { id: PASSWORDLESS, userName: 'no-password', email: 'no-password@managed.test', emailVerified: true, givenName: 'No', familyName: 'Password' },
      ],
    }),
    { GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' },
  );
  tokens = await apiTokens(server);
  upstream = await startOidcUpstream(callbackUrl());
  const transport = transports(() => server)[2]![1]; // Connect JSON
  users = createClient(UserService, transport());
  const admin = createClient(AdminService, transport());
  const management = createClient(ManagementService, transport());
  orgIdp = (await management.addGenericOIDCProvider({ name: 'Upstream', issuer: upstream.issuer, clientId: UPSTREAM_CLIENTS.oidc.clientId, clientSecret: UPSTREAM_CLIENTS.oidc.clientSecret }, as('orgAdmin'))).id;
  instanceOauthIdp = (await admin.addGenericOAuthProvider({
    name: 'Plain OAuth', clientId: UPSTREAM_CLIENTS.oauth.clientId, clientSecret: UPSTREAM_CLIENTS.oauth.clientSecret, authorizationEndpoint: `${upstream.issuer}/auth`,
    tokenEndpoint: `${upstream.issuer}/token`, userEndpoint: `${upstream.issuer}/me`, idAttribute: 'id', scopes: ['openid', 'email'], usePkce: true,
  }, as('iamAdmin'))).id;
  otherIdp = (await management.addGenericOIDCProvider({ name: 'Elsewhere', issuer: upstream.issuer, clientId: 'x', clientSecret: 'y' }, as('otherAdmin'))).id;
});
afterAll(async () => {
  await upstream?.stop();
  await server?.stop();
});

/** Starts an intent, signs in as ada upstream, and follows the provider back to the server's callback; the callback's answer. */
async function signIn(idpId: string, caller: Caller = 'orgAdmin', method: 'GET' | 'POST' = 'GET'): Promise<{ intentId: string; response: Response }> {
  const started = await users.startIdentityProviderIntent({ idpId, content: { case: 'urls', value: { successUrl: SUCCESS, failureUrl: FAILURE } } }, as(caller));
  if (started.nextStep.case !== 'authUrl') throw new Error('no auth URL');
  const back = await authorizeAtOidcProvider(started.nextStep.value, 'ada', callbackUrl());
  const response = method === 'GET'
    ? await fetch(back.href, { redirect: 'manual' })
    : await fetch(callbackUrl(), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: back.searchParams.toString() });
  const intentId = new URL(response.headers.get('location') ?? 'http://x').searchParams.get('id') ?? '';
  return { intentId, response };
}

function successOf(response: Response): { id: string; token: string; user: string | null } {
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(SUCCESS);
  return { id: location.searchParams.get('id')!, token: location.searchParams.get('token')!, user: location.searchParams.get('user') };
}

describe('StartIdentityProviderIntent and RetrieveIdentityProviderIntent', () => {
  it('send the browser to the provider, back through /idps/callback to the success URL, and answer once with what the provider said', async () => {
    const started = await users.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'urls', value: { successUrl: SUCCESS, failureUrl: FAILURE } } }, as('orgAdmin'));
    expect(started.nextStep.case).toBe('authUrl');
    const authUrl = new URL(started.nextStep.value as string);
    expect(authUrl.origin).toBe(upstream.issuer);
    expect(authUrl.searchParams.get('redirect_uri')).toBe(callbackUrl());
    expect(started.details?.resourceOwner).toBe(MGMT.org);

    const { response } = await signIn(orgIdp);
    const { id, token, user } = successOf(response);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(user).toBeNull();

    const retrieved = await users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('orgAdmin'));
    const information = retrieved.idpInformation!;
    expect(information.access.case).toBe('oauth');
    const access = information.access.value as { accessToken: string; idToken?: string };
    expect(access.accessToken).toEqual(expect.any(String));
    expect(access.idToken!.split('.')).toHaveLength(3);
    expect(information).toMatchObject({ idpId: orgIdp, userId: 'ada', userName: 'ada.l' });
    expect(information.rawInformation).toMatchObject({ sub: 'ada', email: 'ada@example.org', email_verified: true });
    expect(retrieved.userId).toBe('');
    expect(retrieved.addHumanUser).toMatchObject({
      username: 'ada.l',
      profile: { givenName: 'Ada', familyName: 'Lovelace', nickName: 'Countess', displayName: 'Ada Lovelace', preferredLanguage: 'en-GB' },
      email: { email: 'ada@example.org', verification: { case: 'isVerified', value: true } },
      phone: { phone: '+41 79 000 00 00', verification: { case: undefined } },
    });

    // once
    const again = await failure(users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('orgAdmin')));
    expect(again.code).toBe(Code.FailedPrecondition);
    // and the provider's tokens are gone from the database
    const row = await server.running.gh.db.selectFrom('idp_intents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'consumed', sealed_result: null });
    expect(JSON.stringify(row)).not.toContain(access.accessToken);
  });

  it('prefill a user that AddHumanUser creates linked, as ZITADEL\'s own login does; a link that cannot be made creates no user', async () => {
    const first = successOf((await signIn(orgIdp)).response);
    const retrieved = await users.retrieveIdentityProviderIntent({ idpIntentId: first.id, idpIntentToken: first.token }, as('orgAdmin'));
    expect(retrieved.addHumanUser?.idpLinks).toEqual([expect.objectContaining({ idpId: orgIdp, userId: 'ada', userName: 'ada.l' })]);
    const refused = await failure(users.addHumanUser({ ...retrieved.addHumanUser!, username: 'ada-elsewhere', idpLinks: retrieved.addHumanUser!.idpLinks.map((link) => ({ ...link, idpId: otherIdp })) }, as('orgAdmin')));
    expect(refused).toMatchObject({ code: Code.NotFound, message: expect.stringMatching(/^idpLinks\[0\]\.idpId: /) });
    expect(await server.running.gh.db.selectFrom('users').select('id').where('user_name', '=', 'ada-elsewhere').execute()).toEqual([]);

    const created = await users.addHumanUser(retrieved.addHumanUser!, as('orgAdmin')); // in the caller's own organization
    expect((await users.listIDPLinks({ userId: created.userId }, as('orgAdmin'))).result).toEqual([expect.objectContaining({ idpId: orgIdp, userId: 'ada' })]);
    // the next sign-in at the provider names the user
    expect(successOf((await signIn(orgIdp)).response).user).toBe(created.userId);
    await users.deleteUser({ userId: created.userId }, as('orgAdmin'));
  });

  it('take the callback as a form post too', async () => {
    const { response } = await signIn(orgIdp, 'orgAdmin', 'POST');
    const { id, token } = successOf(response);
    expect((await users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('iamAdmin'))).idpInformation?.userId).toBe('ada');
  });

  it('name the linked user, and prefill nothing as verified for a plain OAuth server', async () => {
    const { response } = await signIn(instanceOauthIdp, 'iamAdmin');
    const { id, token } = successOf(response);
    const retrieved = await users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('iamAdmin'));
    expect(retrieved.idpInformation).toMatchObject({ idpId: instanceOauthIdp, userId: '4711', userName: '' });
    expect(retrieved.idpInformation?.rawInformation).toMatchObject({ RawInfo: { id: 4711, email: 'ada@example.org', email_verified: true } });
    expect(retrieved.addHumanUser?.email).toMatchObject({ email: '', verification: { case: undefined } });

    await users.addIDPLink({ userId: linkUser(4), idpLink: { idpId: instanceOauthIdp, userId: '4711', userName: 'ada' } }, as('iamAdmin'));
    const linked = successOf((await signIn(instanceOauthIdp, 'iamAdmin')).response);
    expect(linked.user).toBe(linkUser(4));
    expect((await users.retrieveIdentityProviderIntent({ idpIntentId: linked.id, idpIntentToken: linked.token }, as('iamAdmin'))).userId).toBe(linkUser(4));
  });

  it('refuse a wrong token (PermissionDenied) and an expired intent (FailedPrecondition)', async () => {
    const { id, token } = successOf((await signIn(orgIdp)).response);
    const wrong = await failure(users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: `${token}x` }, as('orgAdmin')));
    expect(wrong.code).toBe(Code.PermissionDenied);
    await server.running.gh.db.updateTable('idp_intents').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
    const expired = await failure(users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('orgAdmin')));
    expect(expired).toEqual({ code: Code.FailedPrecondition, message: 'the intent has expired' });
    const unknown = await failure(users.retrieveIdentityProviderIntent({ idpIntentId: '1', idpIntentToken: token }, as('orgAdmin')));
    expect(unknown.code).toBe(Code.FailedPrecondition);
  });

  it('end a replayed callback on the failure URL', async () => {
    const started = await users.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'urls', value: { successUrl: SUCCESS, failureUrl: FAILURE } } }, as('orgAdmin'));
    const back = await authorizeAtOidcProvider(started.nextStep.value as string, 'ada', callbackUrl());
    successOf(await fetch(back.href, { redirect: 'manual' }));
    const replayed = await fetch(back.href, { redirect: 'manual' });
    expect(replayed.status).toBe(302);
    expect(replayed.headers.get('location')!.startsWith(`${FAILURE}?`)).toBe(true);
  });

  it("send the provider's error to the failure URL, and answer an unknown or missing state with a 400 page", async () => {
    const started = await users.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'urls', value: { successUrl: SUCCESS, failureUrl: FAILURE } } }, as('orgAdmin'));
    const state = new URL(started.nextStep.value as string).searchParams.get('state')!;
    const failed = await fetch(`${callbackUrl()}?state=${state}&error=access_denied&error_description=no`, { redirect: 'manual' });
    expect(failed.status).toBe(302);
    const location = new URL(failed.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(FAILURE);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: 'access_denied', error_description: 'Upstream answered access_denied: no' });

    const forged = await fetch(`${callbackUrl()}?state=forged&code=abc`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await forged.text()).toContain('unknown state');
    const bare = await fetch(callbackUrl(), { redirect: 'manual' });
    expect(bare.status).toBe(400);
    expect(await bare.text()).toContain('no state parameter');
    const wrongMethod = await fetch(callbackUrl(), { method: 'PUT', redirect: 'manual' });
    expect(wrongMethod.status).toBe(405);
  });

  it('are for the provider\'s administrators only', async () => {
    const urls = { case: 'urls' as const, value: { successUrl: SUCCESS, failureUrl: FAILURE } };
    expect((await failure(users.startIdentityProviderIntent({ idpId: orgIdp, content: urls }, as('plain')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users.startIdentityProviderIntent({ idpId: orgIdp, content: urls }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(users.startIdentityProviderIntent({ idpId: instanceOauthIdp, content: urls }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(users.startIdentityProviderIntent({ idpId: '404', content: urls }, as('iamAdmin')))).code).toBe(Code.NotFound);
    const { id, token } = successOf((await signIn(orgIdp)).response);
    // another organization's owner with the right token learns nothing, and the intent stays usable
    expect((await failure(users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('otherAdmin')))).code).toBe(Code.NotFound);
    expect((await users.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('orgAdmin'))).idpInformation?.userId).toBe('ada');
  });

  it('refuse ldap credentials and missing urls, naming the field', async () => {
    const ldap = await failure(users.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'ldap', value: { username: 'u', password: 'p' } } }, as('orgAdmin')));
    expect(ldap).toEqual({ code: Code.InvalidArgument, message: 'ldap: Gatehouse has no LDAP providers: start the sign-in with urls' });
    expect((await failure(users.startIdentityProviderIntent({ idpId: orgIdp }, as('orgAdmin')))).message).toMatch(/^urls: is required/);
    const relative = await failure(users.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'urls', value: { successUrl: '/ok', failureUrl: FAILURE } } }, as('orgAdmin')));
    expect(relative).toEqual({ code: Code.InvalidArgument, message: 'urls.successUrl: must be an absolute URL' });
  });

  it('are served over REST at ZITADEL\'s paths', async () => {
    const started = await rest(server, 'POST', '/v2/idp_intents', tokens.orgAdmin, { idpId: orgIdp, urls: { successUrl: SUCCESS, failureUrl: FAILURE } });
    expect(started.status).toBe(200);
    expect(String(started.json['authUrl'])).toMatch(new RegExp(`^${upstream.issuer}/auth\\?`));
    const back = await authorizeAtOidcProvider(String(started.json['authUrl']), 'ada', callbackUrl());
    const { id, token } = successOf(await fetch(back.href, { redirect: 'manual' }));
    const retrieved = await rest(server, 'POST', `/v2/idp_intents/${id}`, tokens.orgAdmin, { idpIntentToken: token });
    expect(retrieved.status).toBe(200);
    expect(retrieved.json).toMatchObject({ idpInformation: { idpId: orgIdp, userId: 'ada', oauth: { accessToken: expect.any(String) } }, addHumanUser: { username: 'ada.l' } });
    // the new field beside the deprecated one, as ZITADEL fills both
    expect(retrieved.json['createUser']).toMatchObject({
      organizationId: MGMT.org,
      username: 'ada.l',
      human: { profile: { givenName: 'Ada', familyName: 'Lovelace' }, email: { email: 'ada@example.org', isVerified: true } },
    });
    expect(retrieved.json['updateHumanUser']).toBeUndefined();
    expect(retrieved.json['updateUser']).toBeUndefined();
  });

  it('over REST, prefill the changes of a linked user, and pass the login hint on to the provider', async () => {
    await users.addIDPLink({ userId: linkUser(5), idpLink: { idpId: orgIdp, userId: 'ada', userName: 'ada.l' } }, as('orgAdmin'));
    const started = await rest(server, 'POST', '/v2/idp_intents', tokens.orgAdmin, { idpId: orgIdp, urls: { successUrl: SUCCESS, failureUrl: FAILURE, loginHint: 'ada@example.org' } });
    expect(new URL(String(started.json['authUrl'])).searchParams.get('login_hint')).toBe('ada@example.org');
    const back = await authorizeAtOidcProvider(String(started.json['authUrl']), 'ada', callbackUrl());
    const { id, token, user } = successOf(await fetch(back.href, { redirect: 'manual' }));
    expect(user).toBe(linkUser(5));
    const retrieved = await rest(server, 'POST', `/v2/idp_intents/${id}`, tokens.orgAdmin, { idpIntentToken: token });
    expect(retrieved.json).toMatchObject({ userId: linkUser(5), updateHumanUser: { userId: linkUser(5), username: 'ada.l', email: { email: 'ada@example.org', isVerified: true } } });
    // and the same changes in the new field, as ZITADEL's UpdateUser takes them
    expect(retrieved.json['updateUser']).toEqual({
      userId: linkUser(5),
      username: 'ada.l',
      human: {
        profile: { givenName: 'Ada', familyName: 'Lovelace', nickName: 'Countess', displayName: 'Ada Lovelace', preferredLanguage: 'en-GB' },
        email: { email: 'ada@example.org', isVerified: true },
        phone: { phone: '+41 79 000 00 00' },
      },
    });
    expect(retrieved.json['addHumanUser']).toBeUndefined();
    expect(retrieved.json['createUser']).toBeUndefined();
    const tooLong = await rest(server, 'POST', '/v2/idp_intents', tokens.orgAdmin, { idpId: orgIdp, urls: { successUrl: SUCCESS, failureUrl: FAILURE, loginHint: 'x'.repeat(201) } });
    expect(tooLong).toMatchObject({ status: 400, json: { message: 'urls.loginHint: must be at most 200 characters' } });
    await users.removeIDPLink({ userId: linkUser(5), idpId: orgIdp, linkedUserId: 'ada' }, as('orgAdmin'));
  });
});

describe.each(transports(() => server))('RetrieveIdentityProviderIntent over %s', (_name, transport) => {
  let client: Client<typeof UserServiceWithUserAction>;
  beforeAll(() => {
    client = createClient(UserServiceWithUserAction, transport());
  });

  async function signInAndRetrieve() {
    const started = await client.startIdentityProviderIntent({ idpId: orgIdp, content: { case: 'urls', value: { successUrl: SUCCESS, failureUrl: FAILURE } } }, as('orgAdmin'));
    if (started.nextStep.case !== 'authUrl') throw new Error('no auth URL');
    const back = await authorizeAtOidcProvider(started.nextStep.value, 'ada', callbackUrl());
    const { id, token } = successOf(await fetch(back.href, { redirect: 'manual' }));
    return client.retrieveIdentityProviderIntent({ idpIntentId: id, idpIntentToken: token }, as('orgAdmin'));
  }

  it('answers create_user when no user is linked, and update_user with the changes when one is', async () => {
    const unlinked = await signInAndRetrieve();
    expect(unlinked.userId).toBe('');
    expect(unlinked.userAction.case).toBe('createUser');
    expect(unlinked.userAction.value).toMatchObject({ organizationId: MGMT.org, username: 'ada.l', userType: { case: 'human' } });
    expect(unlinked.addHumanUser?.username).toBe('ada.l');
    expect(unlinked.updateHumanUser).toBeUndefined();

    await client.addIDPLink({ userId: linkUser(5), idpLink: { idpId: orgIdp, userId: 'ada', userName: 'ada.l' } }, as('orgAdmin'));
    try {
      const linked = await signInAndRetrieve();
      expect(linked.userId).toBe(linkUser(5));
      expect(linked.addHumanUser).toBeUndefined();
      expect(linked.userAction.case).toBe('updateUser');
      if (linked.userAction.case !== 'updateUser') return;
      const update = linked.userAction.value;
      expect(update).toMatchObject({ userId: linkUser(5), username: 'ada.l' });
      expect(update.userType.case).toBe('human');
      if (update.userType.case !== 'human') return;
      const human = update.userType.value;
      expect(human.profile).toMatchObject({ givenName: 'Ada', familyName: 'Lovelace', nickName: 'Countess', displayName: 'Ada Lovelace', preferredLanguage: 'en-GB' });
      expect(human.profile?.gender).toBeUndefined();
      expect(human.email).toMatchObject({ email: 'ada@example.org', verification: { case: 'isVerified', value: true } });
      expect(human.phone).toMatchObject({ phone: '+41 79 000 00 00', verification: { case: undefined } });
      expect(human.password).toBeUndefined();
      // the same changes as the deprecated field ZITADEL's login still reads
      expect(linked.updateHumanUser).toMatchObject({ userId: linkUser(5), username: 'ada.l', profile: { givenName: 'Ada', familyName: 'Lovelace' }, email: { email: 'ada@example.org' } });
    } finally {
      await client.removeIDPLink({ userId: linkUser(5), idpId: orgIdp, linkedUserId: 'ada' }, as('orgAdmin'));
    }
  });
});

describe.each(transports(() => server))('the link calls over %s', (name, transport) => {
  const index = transports(() => server).findIndex(([candidate]) => candidate === name);
  let client: Client<typeof UserService>;
  beforeAll(() => {
    client = createClient(UserService, transport());
  });

  it('add, list and remove a link of a user', async () => {
    const userId = linkUser(index);
    const added = await client.addIDPLink({ userId, idpLink: { idpId: orgIdp, userId: `sub-${index}`, userName: `upstream-${index}` } }, as('orgAdmin'));
    expect(added.details?.resourceOwner).toBe(MGMT.org);
    const listed = await client.listIDPLinks({ userId }, as('orgAdmin'));
    expect(listed.result).toEqual([expect.objectContaining({ idpId: orgIdp, userId: `sub-${index}`, userName: `upstream-${index}` })]);
    expect(listed.details?.totalResult).toBe(1n);
    // ListAuthenticationMethodTypes names the account at the provider, in the enum's order
    expect((await client.listAuthenticationMethodTypes({ userId }, as('orgAdmin'))).authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD, AuthenticationMethodType.IDP]);
    const taken = await failure(client.addIDPLink({ userId: MGMT.alice, idpLink: { idpId: orgIdp, userId: `sub-${index}`, userName: 'again' } }, as('orgAdmin')));
    expect(taken.code).toBe(Code.AlreadyExists);
    await client.removeIDPLink({ userId, idpId: orgIdp, linkedUserId: `sub-${index}` }, as('iamAdmin'));
    expect((await client.listIDPLinks({ userId }, as('orgAdmin'))).result).toEqual([]);
    expect((await client.listAuthenticationMethodTypes({ userId }, as('orgAdmin'))).authMethodTypes).toEqual([AuthenticationMethodType.PASSWORD]);
    expect((await failure(client.removeIDPLink({ userId, idpId: orgIdp, linkedUserId: `sub-${index}` }, as('orgAdmin')))).code).toBe(Code.NotFound);
    const events = await server.running.gh.db.selectFrom('events').select(['event_type', 'payload']).where('aggregate_id', '=', userId).where('event_type', 'like', 'user.human.externalidp.%').orderBy('sequence').execute();
    expect(events.map((event) => event.event_type)).toEqual(['user.human.externalidp.added', 'user.human.externalidp.removed']);
  });

  it('keep another organization\'s owner and providers out', async () => {
    const userId = linkUser(index);
    for (const call of [
      client.addIDPLink({ userId, idpLink: { idpId: orgIdp, userId: 'x', userName: 'x' } }, as('otherAdmin')),
      client.listIDPLinks({ userId }, as('otherAdmin')),
      client.removeIDPLink({ userId, idpId: orgIdp, linkedUserId: 'x' }, as('otherAdmin')),
      client.listIDPLinks({ userId }, as('plain')),
    ]) {
      expect((await failure(call)).code).toBe(Code.PermissionDenied);
    }
    const foreign = await failure(client.addIDPLink({ userId, idpLink: { idpId: otherIdp, userId: 'x', userName: 'x' } }, as('orgAdmin')));
    expect(foreign.code).toBe(Code.NotFound);
    expect(foreign.message).toMatch(/^idpLink.idpId: /);
    const empty = await failure(client.addIDPLink({ userId, idpLink: { idpId: orgIdp, userId: '', userName: 'x' } }, as('orgAdmin')));
    expect(empty).toEqual({ code: Code.InvalidArgument, message: 'idpLink.userId: must not be empty' });
  });
});

describe('RemoveIDPLink', () => {
  it("refuses to remove a user's last way to sign in", async () => {
    await users.addIDPLink({ userId: PASSWORDLESS, idpLink: { idpId: orgIdp, userId: 'only-1', userName: 'only' } }, as('orgAdmin'));
    const refused = await failure(users.removeIDPLink({ userId: PASSWORDLESS, idpId: orgIdp, linkedUserId: 'only-1' }, as('orgAdmin')));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.message).toMatch(/only way to sign in/);
    // with a second link, either may go, but not both
    await users.addIDPLink({ userId: PASSWORDLESS, idpLink: { idpId: instanceOauthIdp, userId: 'only-2', userName: 'only' } }, as('orgAdmin'));
    await users.removeIDPLink({ userId: PASSWORDLESS, idpId: orgIdp, linkedUserId: 'only-1' }, as('orgAdmin'));
    expect((await failure(users.removeIDPLink({ userId: PASSWORDLESS, idpId: instanceOauthIdp, linkedUserId: 'only-2' }, as('orgAdmin')))).code).toBe(Code.FailedPrecondition);
  });
});
