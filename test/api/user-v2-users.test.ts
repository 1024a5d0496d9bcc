/**
 * zitadel.user.v2.UserService, the users' records and lifecycle (docs/management-api.md;
 * docs/security.md 10.1, 10.13): AddHumanUser, CreateUser, GetUserByID, ListUsers, UpdateHumanUser,
 * Deactivate/Reactivate/Lock/Unlock/DeleteUser, with clients built from ZITADEL's own descriptors
 * over the four protocols and plain REST; the permission rules with callers of every level; the
 * lifecycle end to end: a deactivated, locked or deleted user's JWT, opaque and refresh tokens die
 * at once and stay dead.
 */
import { Code, createClient, type Client } from '@connectrpc/connect';
import { TextQueryMethod } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { Type, UserFieldName } from '@zitadel/proto/zitadel/user/v2/query_pb.js';
import { AccessTokenType, Gender, UserState } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { SearchQuerySchema } from '@zitadel/proto/zitadel/user/v2/query_pb.js';
import { findUserById, listUserRoles, updateUser } from '../../src/store/users.ts';
import { findOtpFactor, hasReadyOtpFactor } from '../../src/store/otp-factors.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { API_SCOPE, apiTokens, CALLERS, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';
import { signedInCode } from '../support/sign-in.ts';

const REDIRECT_URI = 'http://localhost:3000/life/callback';
const WEB = { clientId: 'life-web', secret: 'life-web-secret' };
/** The API application of MGMT.project; tokens are asked for with that project in their audience, so it may introspect them. */
const INTROSPECTOR = { clientId: 'portal-api', secret: 'portal-api-secret' };
const SCOPE = `${API_SCOPE} urn:gatehouse:iam:org:project:id:${MGMT.project}:aud`;
const LIFE = {
  bob: '230000000000000001',
  jwtBot: '230000000000000002',
  opaqueBot: '230000000000000003',
  lockBot: '230000000000000004',
  delBot: '230000000000000005',
  erin: '230000000000000006',
} as const;
const BOTS = {
  jwtBot: { user: 'life-jwt-bot', secret: 'life-jwt-secret' },
  opaqueBot: { user: 'life-opaque-bot', secret: 'life-opaque-secret' },
  lockBot: { user: 'life-lock-bot', secret: 'life-lock-secret' },
  delBot: { user: 'life-del-bot', secret: 'life-del-secret' },
} as const;
const PASSWORD = 'Correct-Horse-9';
const UNKNOWN = '299999999999999999';

let server: TestServer;
let tokens: Record<Caller, string>;
/** A token of alice (a plain human of MGMT.org) from a browser sign-in. */
let aliceToken: string;
let users: Client<typeof UserService>;

type Query = MessageInitShape<typeof SearchQuerySchema>;

beforeAll(async () => {
  server = await startTestServer(
    managementDocument({
      users: [
        { id: LIFE.bob, userName: 'life-bob', password: PASSWORD, email: 'bob@managed.test', emailVerified: true, givenName: 'Bob', familyName: 'Life' },
        { id: LIFE.erin, userName: 'life-erin', password: PASSWORD, email: 'erin@managed.test', emailVerified: true, givenName: 'Erin', familyName: 'Life' },
      ],
      machines: [
        { id: LIFE.jwtBot, userName: BOTS.jwtBot.user, secret: BOTS.jwtBot.secret, accessTokenType: 'jwt' },
        { id: LIFE.opaqueBot, userName: BOTS.opaqueBot.user, secret: BOTS.opaqueBot.secret, accessTokenType: 'opaque' },
        { id: LIFE.lockBot, userName: BOTS.lockBot.user, secret: BOTS.lockBot.secret, accessTokenType: 'jwt' },
        { id: LIFE.delBot, userName: BOTS.delBot.user, secret: BOTS.delBot.secret, accessTokenType: 'opaque', roles: ['ORG_OWNER'] },
      ],
      projects: [
        {
          id: '530000000000000001',
          name: 'lifecycle',
          apps: [
            {
              name: 'life-web',
              clientId: WEB.clientId,
              clientSecret: WEB.secret,
              authMethod: 'client_secret_basic',
              redirectUris: [REDIRECT_URI],
              responseTypes: ['code'],
              grantTypes: ['authorization_code', 'refresh_token'],
              accessTokenType: 'jwt',
            },
          ],
        },
      ],
    }),
  );
  tokens = await apiTokens(server);
  aliceToken = (await browserTokens(MGMT.alice)).access;
  users = createClient(UserService, transports(() => server)[2]![1]());
});
afterAll(() => server.stop());

// ---- helpers ----

async function browserTokens(userId: string): Promise<{ access: string; refresh: string }> {
  const issued = await signedInCode(server, { clientId: WEB.clientId, redirectUri: REDIRECT_URI, scopes: ['offline_access', ...SCOPE.split(' ')], userId });
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: issued.code, redirect_uri: REDIRECT_URI }, { authorization: basic(WEB.clientId, WEB.secret) });
  expect(reply.status).toBe(200);
  return { access: String(reply.json['access_token']), refresh: String(reply.json['refresh_token']) };
}

async function machineToken(bot: keyof typeof BOTS): Promise<string> {
  const { user, secret } = BOTS[bot];
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: SCOPE }, { authorization: basic(user, secret) });
  expect(reply.status).toBe(200);
  return String(reply.json['access_token']);
}

async function introspect(token: string): Promise<boolean> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic(INTROSPECTOR.clientId, INTROSPECTOR.secret) });
  expect(reply.status).toBe(200);
  return reply.json['active'] === true;
}

async function refresh(refreshToken: string) {
  return postForm(`${server.url}/oauth/v2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(WEB.clientId, WEB.secret) });
}

/** Whether the token still works on the API (GetUserByID of its own user). */
async function apiAnswers(token: string, userId: string): Promise<Code | 'ok'> {
  try {
    await users.getUserByID({ userId }, withToken(token));
    return 'ok';
  } catch (error) {
    return (await failure(Promise.reject(error))).code;
  }
}

const as = (caller: Caller) => withToken(tokens[caller]);

function userName(name: string, method = TextQueryMethod.EQUALS): Query {
  return { query: { case: 'userNameQuery', value: { userName: name, method } } };
}

function human(name: string, extra: Record<string, unknown> = {}) {
  return {
    username: name,
    profile: { givenName: 'Given', familyName: 'Family' },
    email: { email: `${name}@example.com`, verification: { case: 'isVerified' as const, value: true } },
    ...extra,
  };
}

async function eventsOf(userId: string): Promise<Array<{ event_type: string; creator: string | null }>> {
  return server.running.gh.db
    .selectFrom('events')
    .select(['event_type', 'creator'])
    .where('aggregate_type', '=', 'user')
    .where('aggregate_id', '=', userId)
    .orderBy('sequence')
    .execute();
}

async function countUsers(): Promise<number> {
  const row = await server.running.gh.db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---- the main story over the four protocols ----

describe.each(transports(() => server))('the main story over %s', (name, transport) => {
  const tag = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

  it('creates, reads, lists, updates, moves through the lifecycle and deletes a human and a machine user', async () => {
    const client = createClient(UserService, transport());
    const opts = as('iamAdmin');
    const added = await client.addHumanUser(
      {
        username: `story-${tag}`,
        organization: { org: { case: 'orgId', value: MGMT.org } },
        profile: { givenName: 'Story', familyName: 'Teller', gender: Gender.FEMALE, preferredLanguage: 'de' },
        email: { email: `story-${tag}@example.com`, verification: { case: 'isVerified', value: true } },
        phone: { phone: '+41791234567', verification: { case: 'isVerified', value: true } },
        passwordType: { case: 'password', value: { password: 'Story-Pass-42', changeRequired: false } },
      },
      opts,
    );
    expect(added.userId).toMatch(/^\d{15,}$/);
    expect(added.details?.sequence).toBeGreaterThan(0n);
    expect(added.details?.resourceOwner).toBe(MGMT.org);
    expect(added.details?.creationDate).toBeDefined();
    expect(added.emailCode).toBeUndefined();

    const got = await client.getUserByID({ userId: added.userId }, opts);
    expect(got.user).toMatchObject({
      userId: added.userId,
      state: UserState.ACTIVE,
      username: `story-${tag}`,
      loginNames: [`story-${tag}@managed.test`],
      preferredLoginName: `story-${tag}@managed.test`,
      details: { resourceOwner: MGMT.org },
      type: {
        case: 'human',
        value: {
          profile: { givenName: 'Story', familyName: 'Teller', displayName: 'Story Teller', preferredLanguage: 'de', gender: Gender.FEMALE },
          email: { email: `story-${tag}@example.com`, isVerified: true },
          phone: { phone: '+41791234567', isVerified: true },
        },
      },
    });

    const listed = await client.listUsers({ queries: [userName(`story-${tag}`)] }, opts);
    expect(listed.details?.totalResult).toBe(1n);
    expect(listed.result.map((u) => u.userId)).toEqual([added.userId]);

    await client.updateHumanUser({ userId: added.userId, profile: { givenName: '', familyName: '', nickName: 'Tell' } }, opts);
    const updated = await client.getUserByID({ userId: added.userId }, opts);
    expect(updated.user?.type.case === 'human' && updated.user.type.value.profile).toMatchObject({ givenName: 'Story', familyName: 'Teller', nickName: 'Tell' });

    const state = async () => (await client.getUserByID({ userId: added.userId }, opts)).user?.state;
    expect((await client.deactivateUser({ userId: added.userId }, opts)).details?.sequence).toBeGreaterThan(0n);
    expect(await state()).toBe(UserState.INACTIVE);
    expect(await failure(client.deactivateUser({ userId: added.userId }, opts))).toMatchObject({ code: Code.FailedPrecondition, message: 'the user is already inactive' });
    await client.reactivateUser({ userId: added.userId }, opts);
    expect(await state()).toBe(UserState.ACTIVE);
    await client.lockUser({ userId: added.userId }, opts);
    expect(await state()).toBe(UserState.LOCKED);
    await client.unlockUser({ userId: added.userId }, opts);
    expect(await state()).toBe(UserState.ACTIVE);

    const machine = await client.createUser(
      { organizationId: MGMT.org, username: `story-bot-${tag}`, userType: { case: 'machine', value: { name: 'Story bot', description: 'tells stories' } } },
      opts,
    );
    expect(machine.creationDate).toBeDefined();
    const bot = await client.getUserByID({ userId: machine.id }, opts);
    expect(bot.user).toMatchObject({
      username: `story-bot-${tag}`,
      state: UserState.ACTIVE,
      type: { case: 'machine', value: { name: 'Story bot', description: 'tells stories', hasSecret: false, accessTokenType: AccessTokenType.BEARER } },
    });

    for (const userId of [added.userId, machine.id]) {
      await client.deleteUser({ userId }, opts);
      expect(await failure(client.getUserByID({ userId }, opts))).toMatchObject({ code: Code.NotFound });
    }
  });
});

// ---- creating users ----

describe('AddHumanUser and CreateUser', () => {
  it('stores the password hashed, defaults the user name to the email and the organization to the caller’s, and records events with the creator', async () => {
    const reply = await users.addHumanUser(
      {
        profile: { givenName: 'Dora', familyName: 'Default' },
        email: { email: 'dora@example.com', verification: { case: 'isVerified', value: true } },
        passwordType: { case: 'password', value: { password: 'Dora-Pass-42', changeRequired: false } },
      },
      as('orgAdmin'),
    );
    const row = await findUserById(server.running.gh.db, reply.userId);
    expect(row).toMatchObject({ org_id: MGMT.org, user_name: 'dora@example.com', email_verified: true, display_name: 'Dora Default', state: 'active' });
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
    expect(row?.password_hash).not.toContain('Dora-Pass-42');
    const events = await eventsOf(reply.userId);
    expect(events).toEqual([
      { event_type: 'user.human.added', creator: MGMT.orgAdmin },
      { event_type: 'user.human.email.verified', creator: MGMT.orgAdmin },
    ]);
  });

  it('names the organization by domain, returns the email code to an administrator and mails it otherwise', async () => {
    const returned = await users.addHumanUser(
      { ...human('coded'), organization: { org: { case: 'orgDomain', value: 'ELSEWHERE.test' } }, email: { email: 'coded@example.com', verification: { case: 'returnCode', value: {} } } },
      as('iamAdmin'),
    );
    expect(returned.emailCode).toMatch(/^[A-Z0-9]{6}$/);
    expect((await findUserById(server.running.gh.db, returned.userId))?.org_id).toBe(MGMT.otherOrg);

    const mailed = await users.addHumanUser({ ...human('mailed'), email: { email: 'mailed@example.com' } }, as('iamAdmin'));
    expect(mailed.emailCode).toBeUndefined();
    const outbox = await server.running.gh.db.selectFrom('outbox').select(['recipient']).where('user_id', '=', mailed.userId).execute();
    expect(outbox).toEqual([{ recipient: 'mailed@example.com' }]);
    expect((await eventsOf(mailed.userId)).map((e) => e.event_type)).toEqual(['user.human.added', 'user.human.email.code.added']);
  });

  it('registers a given authenticator secret as ready, and stores a phone unverified without an option', async () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const reply = await users.createUser(
      {
        organizationId: MGMT.org,
        username: 'totp-user',
        userType: {
          case: 'human',
          value: {
            profile: { givenName: 'Tina', familyName: 'Totp' },
            email: { email: 'tina@example.com', verification: { case: 'isVerified', value: true } },
            phone: { phone: '+41 79 123 45 67' },
            totpSecret: secret,
          },
        },
      },
      as('iamAdmin'),
    );
    expect(await hasReadyOtpFactor(server.running.gh.db, reply.id)).toBe(true);
    const factor = await findOtpFactor(server.running.gh.db, reply.id);
    expect(server.running.gh.masterKey.decrypt(factor!.secret)).toBe(secret);
    expect(await findUserById(server.running.gh.db, reply.id)).toMatchObject({ phone: '+41 79 123 45 67', phone_verified: false, password_hash: null });
  });

  it('answers AlreadyExists for a taken user name or id; machine user names are unique in the instance', async () => {
    await users.addHumanUser(human('twin'), as('iamAdmin'));
    expect(await failure(users.addHumanUser(human('TWIN'), as('iamAdmin')))).toMatchObject({ code: Code.AlreadyExists, message: expect.stringMatching(/^username: /) });
    // Another organization may have its own "twin" (docs/security.md 10.12: administrators may reuse names).
    await users.addHumanUser({ ...human('twin'), organization: { org: { case: 'orgId', value: MGMT.otherOrg } } }, as('iamAdmin'));
    expect(await failure(users.addHumanUser({ ...human('other-id'), userId: MGMT.alice }, as('iamAdmin')))).toMatchObject({ code: Code.AlreadyExists, message: expect.stringMatching(/^userId: /) });

    const machine = (org: string) => ({ organizationId: org, username: 'twin-bot', userType: { case: 'machine' as const, value: { name: 'Twin' } } });
    await users.createUser(machine(MGMT.org), as('iamAdmin'));
    expect(await failure(users.createUser(machine(MGMT.otherOrg), as('iamAdmin')))).toMatchObject({ code: Code.AlreadyExists, message: expect.stringContaining('client_credentials') });
    expect(await failure(users.createUser({ ...machine(MGMT.org), username: CALLERS.plain.user }, as('iamAdmin')))).toMatchObject({ code: Code.AlreadyExists });
  });

  it('decides the organization: the caller’s own, one it manages, NotFound or PermissionDenied', async () => {
    expect(await failure(users.addHumanUser({ ...human('far'), organization: { org: { case: 'orgId', value: MGMT.otherOrg } } }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.createUser({ organizationId: MGMT.otherOrg, userType: { case: 'machine', value: { name: 'x' } } }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.addHumanUser({ ...human('nowhere'), organization: { org: { case: 'orgId', value: UNKNOWN } } }, as('iamAdmin')))).toMatchObject({ code: Code.NotFound, message: 'organization not found' });
    expect(await failure(users.addHumanUser({ ...human('nowhere'), organization: { org: { case: 'orgDomain', value: 'nowhere.test' } } }, as('iamAdmin')))).toMatchObject({ code: Code.NotFound });
    expect(await failure(users.addHumanUser({ ...human('nowhere'), organization: { org: { case: 'orgId', value: UNKNOWN } } }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.addHumanUser(human('plain-made'), as('plain')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.addHumanUser(human('alice-made'), withToken(aliceToken)))).toMatchObject({ code: Code.PermissionDenied });
    const ownOrg = await users.createUser({ userType: { case: 'machine', value: { name: 'Mine' } } }, as('otherAdmin'));
    const row = await findUserById(server.running.gh.db, ownOrg.id);
    expect(row).toMatchObject({ org_id: MGMT.otherOrg, kind: 'machine', user_name: ownOrg.id, display_name: 'Mine' });
  });
});

// ---- bad input ----

describe('bad input: InvalidArgument naming the field, nothing stored', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['empty user name', { username: '' }, 'username must not be empty'],
    ['user name with a space', { username: 'two words' }, 'username must not contain spaces or control characters'],
    ['oversized user name', { username: 'u'.repeat(201) }, 'username must be at most 200 characters'],
    ['no profile', { profile: undefined }, 'profile is required'],
    ['empty given name', { profile: { givenName: '', familyName: 'F' } }, 'profile.givenName must not be empty'],
    ['oversized family name', { profile: { givenName: 'G', familyName: 'f'.repeat(201) } }, 'profile.familyName must be at most 200 characters'],
    ['bad language', { profile: { givenName: 'G', familyName: 'F', preferredLanguage: 'not a tag' } }, 'profile.preferredLanguage must be a language tag like en or de-CH'],
    ['unknown gender', { profile: { givenName: 'G', familyName: 'F', gender: 17 } }, 'profile.gender has an unknown value (17)'],
    ['no email', { email: undefined }, 'email is required'],
    ['invalid email', { email: { email: 'not-an-email' } }, 'email.email must be an email address like alice@example.com'],
    ['oversized email', { email: { email: `${'a'.repeat(250)}@example.com` } }, 'email.email must be an email address like alice@example.com'],
    ['bad url template', { email: { email: 'ok@example.com', verification: { case: 'sendCode', value: { urlTemplate: 'https://x.test/{{.Nope}}' } } } }, 'email.sendCode.urlTemplate is invalid'],
    ['foreign link', { email: { email: 'ok@example.com', verification: { case: 'sendCode', value: { urlTemplate: 'https://evil.test/{{.Code}}' } } } }, 'email.sendCode.urlTemplate is invalid'],
    ['weak password', { passwordType: { case: 'password', value: { password: 'short' } } }, 'password.password does not meet the password policy: it needs at least 8 characters, an uppercase letter, a digit, a symbol'],
    ['oversized password', { passwordType: { case: 'password', value: { password: `Aa1!${'x'.repeat(300)}` } } }, 'password.password must be at most 256 characters'],
    ['change required', { passwordType: { case: 'password', value: { password: 'Fine-Pass-42', changeRequired: true } } }, 'password.changeRequired is not supported'],
    ['bad phone', { phone: { phone: 'call me' } }, 'phone.phone must be a phone number like +41791234567'],
    ['phone code by SMS', { phone: { phone: '+41791234567', verification: { case: 'sendCode', value: {} } } }, 'phone.sendCode is not supported: Gatehouse sends no SMS'],
    ['bad authenticator secret', { totpSecret: 'not base32!' }, 'totpSecret must be a base32 secret of at least 16 characters (80 bits)'],
    ['bad user id', { userId: 'a b' }, 'userId must be letters, digits, "_" or "-" (at most 128)'],
  ];

  it.each(cases)('AddHumanUser: %s', async (_what, change, message) => {
    const before = await countUsers();
    const request = { ...human('bad-input'), ...change };
    const error = await failure(users.addHumanUser(request as Parameters<typeof users.addHumanUser>[0], as('iamAdmin')));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.message).toContain(message);
    expect(await countUsers()).toBe(before);
  });

  it('CreateUser names the nested field and refuses a request without a type', async () => {
    const bad = { organizationId: MGMT.org, userType: { case: 'human' as const, value: { profile: { givenName: 'G', familyName: 'F' }, email: { email: 'nope' } } } };
    expect(await failure(users.createUser(bad, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: 'human.email.email must be an email address like alice@example.com' });
    expect(await failure(users.createUser({ organizationId: MGMT.org, userType: { case: 'machine', value: { name: '' } } }, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: 'machine.name must not be empty' });
    expect(await failure(users.createUser({ organizationId: MGMT.org, userType: { case: 'machine', value: { name: 'ok', description: 'd'.repeat(501) } } }, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: 'machine.description must be at most 500 characters' });
    expect(await failure(users.createUser({ organizationId: MGMT.org }, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: 'human or machine is required' });
    const foreignLink = { email: 'ok@example.com', verification: { case: 'sendCode' as const, value: { urlTemplate: 'https://evil.test/{{.Code}}' } } };
    const linked = { organizationId: MGMT.org, userType: { case: 'human' as const, value: { profile: { givenName: 'G', familyName: 'F' }, email: foreignLink } } };
    const before = await countUsers();
    expect(await failure(users.createUser(linked, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: expect.stringMatching(/^human\.email\.sendCode\.urlTemplate is invalid: url template must lead to this server/) });
    expect(await countUsers()).toBe(before);
  });

  it('REST: wrong JSON types, unknown enum names and huge bodies are 4xx, never 500', async () => {
    const before = await countUsers();
    const base = { username: 'rest-bad', profile: { givenName: 'G', familyName: 'F' }, email: { email: 'rest-bad@example.com', isVerified: true } };
    for (const body of [
      { ...base, username: ['array'] },
      { ...base, profile: { givenName: 5, familyName: 'F' } },
      { ...base, profile: { givenName: 'G', familyName: 'F', gender: 'GENDER_NONSENSE' } },
      { ...base, email: 'string instead of object' },
      { ...base, password: { password: 'Fine-Pass-42', changeRequired: 'yes' } },
    ]) {
      const reply = await rest(server, 'POST', '/v2/users/human', tokens.iamAdmin, body);
      expect(reply.status).toBe(400);
      expect(reply.json).toMatchObject({ code: 3, message: expect.any(String) });
    }
    const long = await rest(server, 'POST', '/v2/users/human', tokens.iamAdmin, { ...base, profile: { givenName: 'g'.repeat(20_000), familyName: 'F' } });
    expect(long.status).toBe(400);
    expect(long.json['message']).toBe('profile.givenName must be at most 200 characters');
    const huge = await rest(server, 'POST', '/v2/users/human', tokens.iamAdmin, { ...base, profile: { givenName: 'g'.repeat(2_000_000), familyName: 'F' } });
    expect(huge.status).toBe(413);
    const list = await rest(server, 'POST', '/v2/users', tokens.iamAdmin, { sortingColumn: 'USER_FIELD_NAME_BOGUS' });
    expect(list.status).toBe(400);
    const listType = await rest(server, 'POST', '/v2/users', tokens.iamAdmin, { queries: { userNameQuery: {} } });
    expect(listType.status).toBe(400);
    expect(await countUsers()).toBe(before);
  });
});

// ---- permissions ----

describe('permissions', () => {
  it('GetUserByID: a user reads itself; administrators read whom they manage; NotFound only for those who may see it', async () => {
    expect((await users.getUserByID({ userId: MGMT.plain }, as('plain'))).user?.username).toBe(CALLERS.plain.user);
    expect((await users.getUserByID({ userId: MGMT.alice }, withToken(aliceToken))).user?.username).toBe('alice');
    expect((await users.getUserByID({ userId: MGMT.alice }, as('orgAdmin'))).user?.username).toBe('alice');
    expect((await users.getUserByID({ userId: MGMT.otherAdmin }, as('iamAdmin'))).user?.username).toBe(CALLERS.otherAdmin.user);
    expect(await failure(users.getUserByID({ userId: MGMT.alice }, as('plain')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.getUserByID({ userId: LIFE.bob }, withToken(aliceToken)))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.getUserByID({ userId: MGMT.alice }, as('otherAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    // docs/security.md 10.13: an ORG_OWNER does not reach users holding an instance-wide role.
    expect(await failure(users.getUserByID({ userId: MGMT.instanceOwner }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.getUserByID({ userId: UNKNOWN }, as('iamAdmin')))).toMatchObject({ code: Code.NotFound });
    expect(await failure(users.getUserByID({ userId: UNKNOWN }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
  });

  it('UpdateHumanUser: a user changes its own profile and password, but vouches for nothing and proves its password', async () => {
    const self = withToken(aliceToken);
    await users.updateHumanUser({ userId: MGMT.alice, profile: { givenName: 'Alicia', familyName: '' } }, self);
    expect(await findUserById(server.running.gh.db, MGMT.alice)).toMatchObject({ given_name: 'Alicia', family_name: 'Example' });
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, email: { email: 'a@example.com', verification: { case: 'isVerified', value: true } } }, self))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, email: { email: 'a@example.com', verification: { case: 'returnCode', value: {} } } }, self))).toMatchObject({ code: Code.PermissionDenied });
    const newPassword = { passwordType: { case: 'password' as const, value: { password: 'Correct-Horse-10', changeRequired: false } } };
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, password: newPassword }, self))).toMatchObject({ code: Code.InvalidArgument, message: 'password.currentPassword is required to change your own password' });
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, password: { ...newPassword, verification: { case: 'currentPassword', value: 'wrong' } } }, self))).toMatchObject({
      code: Code.InvalidArgument,
      message: 'password.currentPassword is not the current password',
    });
    expect((await findUserById(server.running.gh.db, MGMT.alice))?.failed_attempts).toBe(1);
    await users.updateHumanUser({ userId: MGMT.alice, password: { ...newPassword, verification: { case: 'currentPassword', value: PASSWORD } } }, self);
    const events = await eventsOf(MGMT.alice);
    expect(events.slice(-1)).toEqual([{ event_type: 'user.human.password.changed', creator: MGMT.alice }]);
    // An administrator needs no proof, and may vouch for the address (docs/security.md 10.1).
    const byAdmin = await users.updateHumanUser({ userId: MGMT.alice, email: { email: 'alicia@managed.test', verification: { case: 'isVerified', value: true } } }, as('orgAdmin'));
    expect(byAdmin.details?.sequence).toBeGreaterThan(0n);
    expect(await findUserById(server.running.gh.db, MGMT.alice)).toMatchObject({ email: 'alicia@managed.test', email_verified: true });
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, profile: { givenName: 'X', familyName: 'Y' } }, as('otherAdmin')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.updateHumanUser({ userId: MGMT.plain, profile: { givenName: 'X', familyName: 'Y' } }, as('iamAdmin')))).toMatchObject({ code: Code.FailedPrecondition });
  });

  it('renames: unique per organization; a user renaming itself may not take any name of the instance (docs/security.md 10.12)', async () => {
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, username: 'life-bob' }, as('iamAdmin')))).toMatchObject({ code: Code.AlreadyExists });
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, username: CALLERS.otherAdmin.user }, withToken(aliceToken)))).toMatchObject({ code: Code.AlreadyExists });
    await users.updateHumanUser({ userId: MGMT.alice, username: 'ALICE' }, withToken(aliceToken));
    expect((await users.getUserByID({ userId: MGMT.alice }, as('iamAdmin'))).user?.preferredLoginName).toBe('ALICE@managed.test');
    await users.updateHumanUser({ userId: MGMT.alice, username: 'alice' }, as('orgAdmin'));
    expect(await failure(users.updateHumanUser({ userId: MGMT.alice, username: '' }, as('orgAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: 'username must not be empty' });
  });

  it('lifecycle calls are for administrators only, never on oneself nor above one’s reach', async () => {
    for (const call of ['deactivateUser', 'lockUser', 'deleteUser', 'unlockUser', 'reactivateUser'] as const) {
      expect(await failure(users[call]({ userId: MGMT.alice }, withToken(aliceToken)))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(users[call]({ userId: MGMT.plain }, as('plain')))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(users[call]({ userId: MGMT.instanceOwner }, as('orgAdmin')))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(users[call]({ userId: MGMT.alice }, as('otherAdmin')))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(users[call]({ userId: UNKNOWN }, as('iamAdmin')))).toMatchObject({ code: Code.NotFound });
    }
    expect(await findUserById(server.running.gh.db, MGMT.alice)).toMatchObject({ state: 'active' });
  });
});

// ---- listing ----

describe('ListUsers', () => {
  const ids: Record<string, string> = {};
  const prefix = userName('lq-', TextQueryMethod.STARTS_WITH);
  const and = (...queries: Query[]): Query[] => [prefix, ...queries];
  const names = async (queries: Query[], extra: Record<string, unknown> = {}, caller: Caller = 'iamAdmin') => {
    const reply = await users.listUsers({ queries, ...extra, sortingColumn: UserFieldName.USER_NAME, query: { asc: true, ...(extra['query'] as object | undefined) } }, as(caller));
    return { total: reply.details?.totalResult, names: reply.result.map((u) => u.username) };
  };

  beforeAll(async () => {
    const make = async (name: string, org: string, profile: Record<string, unknown>, email: string) => {
      const reply = await users.createUser(
        { organizationId: org, username: name, userType: { case: 'human', value: { profile: { givenName: 'G', familyName: 'F', ...profile }, email: { email, verification: { case: 'isVerified', value: true } } } } },
        as('iamAdmin'),
      );
      ids[name] = reply.id;
    };
    await make('lq-anna', MGMT.org, { givenName: 'Anna', familyName: 'Berg' }, 'anna@lq.test');
    await make('lq-ben', MGMT.org, { givenName: 'Ben', familyName: 'Cole', nickName: 'benny' }, 'ben@lq.test');
    await make('lq-cleo', MGMT.org, { givenName: 'Cleo', familyName: 'Berg' }, 'cleo@other.test');
    await make('lq-far', MGMT.otherOrg, { givenName: 'Far', familyName: 'Away' }, 'far@lq.test');
    ids['lq-bot'] = (await users.createUser({ organizationId: MGMT.org, username: 'lq-bot', userType: { case: 'machine', value: { name: 'LQ Robot' } } }, as('iamAdmin'))).id;
    await users.deactivateUser({ userId: ids['lq-ben']! }, as('iamAdmin'));
  });

  it('combines queries with and, or and not', async () => {
    expect(await names([prefix])).toEqual({ total: 5n, names: ['lq-anna', 'lq-ben', 'lq-bot', 'lq-cleo', 'lq-far'] });
    expect((await names(and({ query: { case: 'lastNameQuery', value: { lastName: 'Berg', method: TextQueryMethod.EQUALS } } }))).names).toEqual(['lq-anna', 'lq-cleo']);
    const either: Query = {
      query: {
        case: 'orQuery',
        value: {
          queries: [
            { query: { case: 'firstNameQuery', value: { firstName: 'Anna', method: TextQueryMethod.EQUALS } } },
            { query: { case: 'nickNameQuery', value: { nickName: 'BENNY', method: TextQueryMethod.EQUALS_IGNORE_CASE } } },
          ],
        },
      },
    };
    expect((await names(and(either))).names).toEqual(['lq-anna', 'lq-ben']);
    expect((await names(and({ query: { case: 'notQuery', value: { query: { query: { case: 'typeQuery', value: { type: Type.HUMAN } } } } } }))).names).toEqual(['lq-bot']);
    expect((await names(and({ query: { case: 'andQuery', value: { queries: [{ query: { case: 'typeQuery', value: { type: Type.HUMAN } } }, { query: { case: 'organizationIdQuery', value: { organizationId: MGMT.otherOrg } } }] } } }))).names).toEqual(['lq-far']);
  });

  it('queries by state, email, display name, login name, ids and emails, literally', async () => {
    expect((await names(and({ query: { case: 'stateQuery', value: { state: UserState.INACTIVE } } }))).names).toEqual(['lq-ben']);
    expect((await names(and({ query: { case: 'stateQuery', value: { state: UserState.ACTIVE } } }))).total).toBe(4n);
    expect((await names(and({ query: { case: 'emailQuery', value: { emailAddress: '@LQ.TEST', method: TextQueryMethod.ENDS_WITH_IGNORE_CASE } } }))).names).toEqual(['lq-anna', 'lq-ben', 'lq-far']);
    expect((await names(and({ query: { case: 'displayNameQuery', value: { displayName: 'Robot', method: TextQueryMethod.CONTAINS } } }))).names).toEqual(['lq-bot']);
    expect((await names([{ query: { case: 'loginNameQuery', value: { loginName: 'lq-anna@managed.test', method: TextQueryMethod.EQUALS } } }])).names).toEqual(['lq-anna']);
    expect((await names([{ query: { case: 'inUserIdsQuery', value: { userIds: [ids['lq-anna']!, ids['lq-far']!, UNKNOWN] } } }])).names).toEqual(['lq-anna', 'lq-far']);
    expect((await names([{ query: { case: 'inUserEmailsQuery', value: { userEmails: ['ANNA@lq.test'] } } }])).names).toEqual(['lq-anna']);
    // Wildcards in a value are literal: '%' matches nothing here rather than everything.
    expect((await names([userName('%', TextQueryMethod.CONTAINS)])).total).toBe(0n);
    expect((await names([userName('lq_', TextQueryMethod.STARTS_WITH)])).total).toBe(0n);
  });

  it('sorts, pages and counts every match', async () => {
    expect(await names([prefix], { query: { offset: 1n, limit: 2, asc: true } })).toEqual({ total: 5n, names: ['lq-ben', 'lq-bot'] });
    expect(await names([prefix], { query: { offset: 0n, limit: 2, asc: false } })).toEqual({ total: 5n, names: ['lq-far', 'lq-cleo'] });
    const byFirstName = await users.listUsers({ queries: [prefix, { query: { case: 'typeQuery', value: { type: Type.HUMAN } } }], sortingColumn: UserFieldName.FIRST_NAME, query: { asc: true } }, as('iamAdmin'));
    expect(byFirstName.result.map((u) => u.username)).toEqual(['lq-anna', 'lq-ben', 'lq-cleo', 'lq-far']);
    expect(byFirstName.sortingColumn).toBe(UserFieldName.FIRST_NAME);
    expect(byFirstName.details?.processedSequence).toBeGreaterThan(0n);
  });

  it('an ORG_OWNER sees its organization’s users only, without instance-wide role holders; others are refused', async () => {
    expect(await names([prefix], {}, 'orgAdmin')).toEqual({ total: 4n, names: ['lq-anna', 'lq-ben', 'lq-bot', 'lq-cleo'] });
    expect(await names([prefix], {}, 'otherAdmin')).toEqual({ total: 1n, names: ['lq-far'] });
    const all = await users.listUsers({ query: { limit: 1000 } }, as('orgAdmin'));
    const seen = all.result.map((u) => u.userId);
    expect(all.details?.totalResult).toBe(BigInt(seen.length));
    expect(seen).toContain(MGMT.alice);
    expect(seen).not.toContain(MGMT.instanceOwner);
    expect(seen).not.toContain(MGMT.iamAdmin);
    expect(seen).not.toContain(MGMT.otherAdmin);
    expect(all.result.every((u) => u.details?.resourceOwner === MGMT.org)).toBe(true);
    expect(await failure(users.listUsers({}, as('plain')))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.listUsers({}, withToken(aliceToken)))).toMatchObject({ code: Code.PermissionDenied });
  });

  it('refuses requests it cannot answer with InvalidArgument naming the field', async () => {
    const cases: Array<[Parameters<typeof users.listUsers>[0], string]> = [
      [{ sortingColumn: 99 as UserFieldName }, 'sortingColumn has an unknown value (99)'],
      [{ query: { limit: 5000 } }, 'query.limit must be at most 1000'],
      [{ queries: [{ query: { case: 'orQuery', value: { queries: [] } } }] }, 'queries[0].orQuery.queries must hold at least one query'],
      [{ queries: [{ query: { case: 'stateQuery', value: { state: UserState.UNSPECIFIED } } }] }, 'queries[0].stateQuery.state must name a user state'],
      [{ queries: [{ query: { case: 'typeQuery', value: { type: Type.UNSPECIFIED } } }] }, 'queries[0].typeQuery.type must be TYPE_HUMAN or TYPE_MACHINE'],
      [{ queries: [{}] }, 'queries[0] sets no query'],
      [{ queries: [prefix, userName('x', 42 as TextQueryMethod)] }, 'queries[1].userNameQuery.method has an unknown value (42)'],
    ];
    for (const [request, message] of cases) {
      expect(await failure(users.listUsers(request, as('iamAdmin')))).toEqual({ code: Code.InvalidArgument, message });
    }
    let deep: Query = prefix;
    for (let i = 0; i < 12; i++) deep = { query: { case: 'notQuery', value: { query: deep } } };
    expect(await failure(users.listUsers({ queries: [deep] }, as('iamAdmin')))).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining('nests more than') });
  });
});

// ---- the lifecycle ends access ----

describe('the lifecycle ends access at once, and reactivating brings nothing back', () => {
  it('deactivate: JWT, opaque and refresh tokens die; reactivate keeps them dead; new sign-ins work', async () => {
    const jwt = await machineToken('jwtBot');
    const opaque = await machineToken('opaqueBot');
    const bob = await browserTokens(LIFE.bob);
    expect(jwt.split('.')).toHaveLength(3);
    expect(opaque.split('.')).not.toHaveLength(3);
    for (const token of [jwt, opaque, bob.access]) expect(await introspect(token)).toBe(true);
    expect(await apiAnswers(jwt, LIFE.jwtBot)).toBe('ok');
    expect(await apiAnswers(opaque, LIFE.opaqueBot)).toBe('ok');

    for (const userId of [LIFE.jwtBot, LIFE.opaqueBot, LIFE.bob]) await users.deactivateUser({ userId }, as('iamAdmin'));
    const dead = async () => {
      for (const token of [jwt, opaque, bob.access]) expect(await introspect(token)).toBe(false);
      const refreshed = await refresh(bob.refresh);
      expect(refreshed.status).toBe(400);
      expect(refreshed.json['error']).toBe('invalid_grant');
      expect(await apiAnswers(jwt, LIFE.jwtBot)).toBe(Code.Unauthenticated);
      expect(await apiAnswers(opaque, LIFE.opaqueBot)).toBe(Code.Unauthenticated);
      expect(await apiAnswers(bob.access, LIFE.bob)).toBe(Code.Unauthenticated);
    };
    await dead();
    const refused = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: API_SCOPE }, { authorization: basic(BOTS.jwtBot.user, BOTS.jwtBot.secret) });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect((await eventsOf(LIFE.bob)).slice(-1)).toEqual([{ event_type: 'user.deactivated', creator: MGMT.iamAdmin }]);

    for (const userId of [LIFE.jwtBot, LIFE.opaqueBot, LIFE.bob]) await users.reactivateUser({ userId }, as('iamAdmin'));
    await dead();
    // JWTs count from the second after the deactivation (`iat` has whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fresh = await machineToken('jwtBot');
    expect(await apiAnswers(fresh, LIFE.jwtBot)).toBe('ok');
    expect(await introspect((await browserTokens(LIFE.bob)).access)).toBe(true);
  });

  it('lock: tokens die at once; unlock brings none back', async () => {
    const jwt = await machineToken('lockBot');
    expect(await introspect(jwt)).toBe(true);
    await users.lockUser({ userId: LIFE.lockBot }, as('orgAdmin'));
    expect(await introspect(jwt)).toBe(false);
    expect(await apiAnswers(jwt, LIFE.lockBot)).toBe(Code.Unauthenticated);
    expect(await failure(users.lockUser({ userId: LIFE.lockBot }, as('orgAdmin')))).toMatchObject({ code: Code.FailedPrecondition, message: 'the user is already locked' });
    expect(await failure(users.reactivateUser({ userId: LIFE.lockBot }, as('orgAdmin')))).toMatchObject({ code: Code.FailedPrecondition });
    await users.unlockUser({ userId: LIFE.lockBot }, as('orgAdmin'));
    expect(await introspect(jwt)).toBe(false);
    expect(await failure(users.unlockUser({ userId: LIFE.lockBot }, as('orgAdmin')))).toMatchObject({ code: Code.FailedPrecondition, message: 'the user is not locked' });
  });

  it('delete: tokens die, the user and what hangs on it are gone, the event stays', async () => {
    const opaque = await machineToken('delBot');
    expect(await introspect(opaque)).toBe(true);
    expect(await listUserRoles(server.running.gh.db, LIFE.delBot)).toHaveLength(1);
    const reply = await rest(server, 'DELETE', `/v2/users/${LIFE.delBot}`, tokens.iamAdmin);
    expect(reply.status).toBe(200);
    expect(await introspect(opaque)).toBe(false);
    expect(await apiAnswers(opaque, LIFE.delBot)).toBe(Code.Unauthenticated);
    expect(await findUserById(server.running.gh.db, LIFE.delBot)).toBeUndefined();
    expect(await listUserRoles(server.running.gh.db, LIFE.delBot)).toEqual([]);
    const again = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope: API_SCOPE }, { authorization: basic(BOTS.delBot.user, BOTS.delBot.secret) });
    expect(again.json['error']).toBe('invalid_client');
    expect((await eventsOf(LIFE.delBot)).slice(-1)).toEqual([{ event_type: 'user.removed', creator: MGMT.iamAdmin }]);
    expect((await rest(server, 'DELETE', `/v2/users/${LIFE.delBot}`, tokens.iamAdmin)).status).toBe(404);
  });

  it('the brute-force lockout shows as locked, stays apart from LockUser, and UnlockUser clears it', async () => {
    const db = server.running.gh.db;
    await updateUser(db, LIFE.erin, { failed_attempts: 3, locked_until: new Date(Date.now() + 600_000) });
    expect((await users.getUserByID({ userId: LIFE.erin }, as('iamAdmin'))).user?.state).toBe(UserState.LOCKED);
    const locked = await users.listUsers({ queries: [userName('life-erin'), { query: { case: 'stateQuery', value: { state: UserState.LOCKED } } }] }, as('iamAdmin'));
    expect(locked.details?.totalResult).toBe(1n);
    expect(await findUserById(db, LIFE.erin)).toMatchObject({ state: 'active' });
    await users.unlockUser({ userId: LIFE.erin }, as('orgAdmin'));
    expect(await findUserById(db, LIFE.erin)).toMatchObject({ state: 'active', failed_attempts: 0, locked_until: null });
    expect((await users.getUserByID({ userId: LIFE.erin }, as('iamAdmin'))).user?.state).toBe(UserState.ACTIVE);
    // An administrator's lock leaves the counters alone and lasts until UnlockUser.
    await users.lockUser({ userId: LIFE.erin }, as('orgAdmin'));
    expect(await findUserById(db, LIFE.erin)).toMatchObject({ state: 'locked', locked_until: null });
    await users.unlockUser({ userId: LIFE.erin }, as('orgAdmin'));
    expect((await eventsOf(LIFE.erin)).map((e) => e.event_type).slice(-3)).toEqual(['user.unlocked', 'user.locked', 'user.unlocked']);
  });
});

// ---- REST ----

describe('REST bindings', () => {
  it('POST /v2/users/human, GET /v2/users/{id}, POST /v2/users, PUT /v2/users/human/{id}, lifecycle POSTs and DELETE', async () => {
    const token = tokens.iamAdmin;
    const created = await rest(server, 'POST', '/v2/users/human', token, {
      username: 'rest-user',
      organization: { orgId: MGMT.org },
      profile: { givenName: 'Rest', familyName: 'User', gender: 'GENDER_DIVERSE' },
      email: { email: 'rest@example.com', returnCode: {} },
      password: { password: 'Rest-Pass-42' },
    });
    expect(created.status).toBe(200);
    const userId = String(created.json['userId']);
    expect(created.json).toMatchObject({ emailCode: expect.stringMatching(/^[A-Z0-9]{6}$/), details: { sequence: expect.stringMatching(/^\d+$/), resourceOwner: MGMT.org } });

    const got = await rest(server, 'GET', `/v2/users/${userId}`, token);
    expect(got.status).toBe(200);
    expect(got.json['user']).toMatchObject({
      userId,
      state: 'USER_STATE_ACTIVE',
      username: 'rest-user',
      preferredLoginName: 'rest-user@managed.test',
      human: { profile: { givenName: 'Rest', familyName: 'User', gender: 'GENDER_DIVERSE' }, email: { email: 'rest@example.com' } },
    });

    const listed = await rest(server, 'POST', '/v2/users', token, { queries: [{ userNameQuery: { userName: 'rest-user', method: 'TEXT_QUERY_METHOD_EQUALS' } }] });
    expect(listed.status).toBe(200);
    expect(listed.json['details']).toMatchObject({ totalResult: '1' });

    const put = await rest(server, 'PUT', `/v2/users/human/${userId}`, token, { profile: { givenName: 'Rested', familyName: '' }, phone: { phone: '+41791234567' } });
    expect(put.status).toBe(200);
    expect(await findUserById(server.running.gh.db, userId)).toMatchObject({ given_name: 'Rested', family_name: 'User', phone: '+41791234567', phone_verified: false });

    for (const [action, state] of [['deactivate', 'inactive'], ['reactivate', 'active'], ['lock', 'locked'], ['unlock', 'active']] as const) {
      const reply = await rest(server, 'POST', `/v2/users/${userId}/${action}`, token, {});
      expect(reply.status).toBe(200);
      expect((await findUserById(server.running.gh.db, userId))?.state).toBe(state);
    }
    const again = await rest(server, 'POST', `/v2/users/${userId}/unlock`, token, {});
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ code: 9, message: 'the user is not locked' });

    expect((await rest(server, 'DELETE', `/v2/users/${userId}`, token)).status).toBe(200);
    expect((await rest(server, 'GET', `/v2/users/${userId}`, token)).status).toBe(404);
    expect((await rest(server, 'GET', `/v2/users/${userId}`, tokens.orgAdmin)).status).toBe(403);
    expect((await rest(server, 'POST', '/v2/users', tokens.plain, {})).status).toBe(403);
  });
});
