/**
 * The first-sign-in decisions of an external sign-in (domain/federation/first-sign-in.ts,
 * docs/federation.md#signing-in-with-a-provider), on a real database: a link signs in, a verified
 * address links one user of an organization the provider serves, a login name waits for the
 * person's own sign-in, auto-creation makes a linked user without a password, and otherwise the
 * person chooses. An organization's provider never reaches another organization's users.
 */
import { Directory } from '../../src/domain/instance/directory.ts';
import { addOrgLoginPolicy, changeLoginPolicy, DEFAULT_LOGIN } from '../../src/domain/instance/policies.ts';
import { MasterKey } from '../../src/domain/kernel/crypto.ts';
import {
  createLinkedUser, decideFirstSignIn, freeUserName, linkUser, mayServe, type ExternalAccount, type FirstSignInContext,
} from '../../src/domain/federation/first-sign-in.ts';
import { addProvider, addProviderToLoginPolicy, anyProvider, NO_OPTIONS, type Provider, type ProviderOptions } from '../../src/domain/federation/providers.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

let database: FreshDatabase;
let ctx: FirstSignInContext;
const INSTANCE = '910000000000000001';
const ORG_A = '910000000000000002';
const ORG_B = '910000000000000003';
const ORG_C = '910000000000000004';
const writer = { instanceId: INSTANCE, creator: 'test' };
const masterKey = new MasterKey(Buffer.alloc(32, 7).toString('base64'));
let userSeq = 0;

async function user(orgId: string, userName: string, email: string | null, verified: boolean, state: 'active' | 'inactive' = 'active'): Promise<string> {
  const id = `91000000000000${String(1000 + ++userSeq)}`;
  await database.db.insertInto('users').values({
    id, instance_id: INSTANCE, org_id: orgId, kind: 'human', user_name: userName, state, password_hash: null, email, email_verified: verified,
    phone: null, given_name: 'Given', family_name: 'Family', nickname: null, display_name: 'Given Family', preferred_language: null, gender: null,
    address: null, secret_hash: null, created_at: new Date(), changed_at: new Date(),
  }).execute();
  return id;
}

/** A provider of `orgId` (or the instance's), listed on the login policy of `listedBy`. */
async function provider(orgId: string | undefined, options: Partial<ProviderOptions>, listedBy: Array<string | undefined> = [orgId]): Promise<Provider> {
  const owner = { instanceId: INSTANCE, orgId };
  const { id } = await database.db.transaction().execute((trx) =>
    addProvider(trx, writer, owner, {
      kind: 'oidc', name: `Upstream ${id8()}`, clientId: 'client', clientSecret: 'secret', scopes: [], usePkce: true, issuer: 'https://upstream.example.com',
      isIdTokenMapping: false, options: { ...NO_OPTIONS, ...options },
    }, { allowPrivateNetworks: true, masterKey }),
  );
  for (const lister of listedBy) {
    await database.db.transaction().execute((trx) => addProviderToLoginPolicy(trx, writer, { instanceId: INSTANCE, orgId: lister }, id));
  }
  return anyProvider(database.db, INSTANCE, id);
}

let seq = 0;
function id8(): string {
  return String(++seq).padStart(8, '0');
}

function account(p: Provider, subject: string, profile: Partial<ExternalAccount['profile']> = {}): ExternalAccount {
  return { providerId: p.id, subject, userName: profile.userName ?? subject, profile: { emailVerified: false, phoneVerified: false, ...profile } };
}

async function linkOf(idpId: string, subject: string) {
  return database.db.selectFrom('idp_links').select(['user_id', 'external_user_name']).where('idp_id', '=', idpId).where('external_user_id', '=', subject).executeTakeFirst();
}

beforeAll(async () => {
  database = await freshDatabase();
  ctx = { db: database.db, instanceId: INSTANCE, externalUrl: 'https://gatehouse.test', masterKey };
  await database.db.insertInto('instances').values({ id: INSTANCE, name: 'test', default_org_id: null, created_at: new Date() }).execute();
  await database.db.insertInto('orgs').values([
    { id: ORG_A, instance_id: INSTANCE, name: 'A', primary_domain: 'a.test', created_at: new Date(), changed_at: new Date() },
    { id: ORG_B, instance_id: INSTANCE, name: 'B', primary_domain: 'b.test', created_at: new Date(), changed_at: new Date() },
    { id: ORG_C, instance_id: INSTANCE, name: 'C', primary_domain: 'c.test', created_at: new Date(), changed_at: new Date() },
  ]).execute();
  await database.db.updateTable('instances').set({ default_org_id: ORG_A }).where('id', '=', INSTANCE).execute();
  // A and B have policies of their own that allow external sign-in; C follows the instance's, which does not.
  await database.db.transaction().execute(async (trx) => {
    await addOrgLoginPolicy(trx, writer, ORG_A, { ...DEFAULT_LOGIN, allowExternalIdp: true });
    await addOrgLoginPolicy(trx, writer, ORG_B, { ...DEFAULT_LOGIN, allowExternalIdp: true });
    await changeLoginPolicy(trx, writer, { instanceId: INSTANCE }, { ...DEFAULT_LOGIN, allowExternalIdp: false });
  });
});
afterAll(() => database.close());

describe('which organizations a provider serves', () => {
  it('an organization\'s provider its own only; an instance provider those that list it with external sign-in allowed', async () => {
    const own = await provider(ORG_A, {});
    expect(await mayServe(database.db, own, ORG_A)).toBe(true);
    expect(await mayServe(database.db, own, ORG_B)).toBe(false);
    const shared = await provider(undefined, {}, [undefined, ORG_A]);
    expect(await mayServe(database.db, shared, ORG_A)).toBe(true);
    expect(await mayServe(database.db, shared, ORG_B)).toBe(false); // B's own policy does not list it
    expect(await mayServe(database.db, shared, ORG_C)).toBe(false); // the instance's policy lists it but allows no external sign-in
  });
});

describe('a linked account', () => {
  it('signs in as the linked user, and not once the user is deactivated', async () => {
    const p = await provider(ORG_A, {});
    const linked = await user(ORG_A, 'linked-a', 'linked@a.test', true);
    expect(await linkUser(ctx, p, linked, account(p, 'sub-linked'))).toBe(true);
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-linked'), ORG_A)).toEqual({ kind: 'user', userId: linked, how: 'linked' });
    await database.db.updateTable('users').set({ state: 'inactive' }).where('id', '=', linked).execute();
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-linked'), ORG_A)).toEqual({ kind: 'refused', reason: 'inactive' });
  });

  it('says a locked user is locked: an administrator\'s lock without an end, a lockout until it ends', async () => {
    const p = await provider(ORG_A, { isAutoCreation: true });
    const linked = await user(ORG_A, 'linked-locked', null, false);
    expect(await linkUser(ctx, p, linked, account(p, 'sub-locked'))).toBe(true);
    const until = new Date(Date.now() + 10 * 60_000);
    await database.db.updateTable('users').set({ locked_until: until }).where('id', '=', linked).execute();
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-locked'), ORG_A)).toEqual({ kind: 'refused', reason: 'locked', until });
    await database.db.updateTable('users').set({ state: 'locked' }).where('id', '=', linked).execute();
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-locked'), ORG_A)).toEqual({ kind: 'refused', reason: 'locked' });
    await database.db.updateTable('users').set({ state: 'active', locked_until: new Date(Date.now() - 1000) }).where('id', '=', linked).execute();
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-locked'), ORG_A)).toEqual({ kind: 'user', userId: linked, how: 'linked' });
    // Refused, the link stands: no second user was auto-created meanwhile.
    expect(await database.db.selectFrom('idp_links').select('user_id').where('idp_id', '=', p.id).execute()).toEqual([{ user_id: linked }]);
  });

  it('is refused when the user\'s organization no longer lists the instance provider', async () => {
    const shared = await provider(undefined, {}, [ORG_A]);
    const linked = await user(ORG_A, 'linked-shared', null, false);
    expect(await linkUser(ctx, shared, linked, account(shared, 'sub-shared'))).toBe(true);
    expect((await decideFirstSignIn(ctx, shared, account(shared, 'sub-shared'), ORG_A)).kind).toBe('user');
    await database.db.deleteFrom('login_policy_idps').where('owner_id', '=', ORG_A).where('idp_id', '=', shared.id).execute();
    expect(await decideFirstSignIn(ctx, shared, account(shared, 'sub-shared'), ORG_A)).toEqual({ kind: 'refused', reason: 'not-served' });
    // Nor does its state show through a provider that no longer serves it.
    await database.db.updateTable('users').set({ state: 'inactive' }).where('id', '=', linked).execute();
    expect(await decideFirstSignIn(ctx, shared, account(shared, 'sub-shared'), ORG_A)).toEqual({ kind: 'refused', reason: 'not-served' });
  });

  it('keeps the stored email without isAutoUpdate, and follows the upstream with it (verified only when vouched for)', async () => {
    const still = await provider(ORG_A, {});
    const stillUser = await user(ORG_A, 'still', 'old@a.test', true);
    await linkUser(ctx, still, stillUser, account(still, 'sub-still'));
    await decideFirstSignIn(ctx, still, account(still, 'sub-still', { email: 'new@a.test', emailVerified: true, givenName: 'New' }), ORG_A);
    expect(await database.db.selectFrom('users').select(['email', 'email_verified', 'given_name']).where('id', '=', stillUser).executeTakeFirst()).toEqual({
      email: 'old@a.test', email_verified: true, given_name: 'Given',
    });

    const updating = await provider(ORG_A, { isAutoUpdate: true });
    const updated = await user(ORG_A, 'updated', 'old2@a.test', true);
    await linkUser(ctx, updating, updated, account(updating, 'sub-upd'));
    await decideFirstSignIn(ctx, updating, account(updating, 'sub-upd', { email: 'new2@a.test', emailVerified: false, givenName: 'Renamed', displayName: 'Renamed Person' }), ORG_A);
    expect(await database.db.selectFrom('users').select(['email', 'email_verified', 'given_name', 'display_name']).where('id', '=', updated).executeTakeFirst()).toEqual({
      email: 'new2@a.test', email_verified: false, given_name: 'Renamed', display_name: 'Renamed Person',
    });
    await decideFirstSignIn(ctx, updating, account(updating, 'sub-upd', { email: 'new2@a.test', emailVerified: true }), ORG_A);
    expect((await database.db.selectFrom('users').select('email_verified').where('id', '=', updated).executeTakeFirstOrThrow()).email_verified).toBe(true);
  });
});

describe('autoLinking email', () => {
  it('links the one user with the same verified address in a served organization', async () => {
    const p = await provider(ORG_A, { autoLinking: 'email' });
    const alice = await user(ORG_A, 'alice', 'Alice@Example.com', true);
    const decided = await decideFirstSignIn(ctx, p, account(p, 'sub-alice', { email: 'alice@example.com', emailVerified: true }), ORG_A);
    expect(decided).toEqual({ kind: 'user', userId: alice, how: 'auto-linked' });
    expect((await linkOf(p.id, 'sub-alice'))?.user_id).toBe(alice);
    const events = await database.db.selectFrom('events').select(['event_type', 'payload']).where('aggregate_id', '=', alice).execute();
    expect(events).toEqual([{ event_type: 'user.human.externalidp.added', payload: { idpId: p.id, externalUserId: 'sub-alice' } }]);
    // The next time, the link finds her.
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-alice'), ORG_A)).toEqual({ kind: 'user', userId: alice, how: 'linked' });
  });

  it('links nobody when either address is unverified, or several users have it', async () => {
    const p = await provider(ORG_A, { autoLinking: 'email' });
    await user(ORG_A, 'bob', 'bob@example.com', true);
    expect((await decideFirstSignIn(ctx, p, account(p, 'sub-bob', { email: 'bob@example.com', emailVerified: false }), ORG_A)).kind).toBe('choose');
    await user(ORG_A, 'carol', 'carol@example.com', false);
    expect((await decideFirstSignIn(ctx, p, account(p, 'sub-carol', { email: 'carol@example.com', emailVerified: true }), ORG_A)).kind).toBe('choose');
    await user(ORG_A, 'dave1', 'dave@example.com', true);
    await user(ORG_A, 'dave2', 'dave@example.com', true);
    expect((await decideFirstSignIn(ctx, p, account(p, 'sub-dave', { email: 'dave@example.com', emailVerified: true }), ORG_A)).kind).toBe('choose');
    expect(await linkOf(p.id, 'sub-dave')).toBeUndefined();
  });

  it('never reaches a user of an organization the provider does not serve', async () => {
    const p = await provider(ORG_A, { autoLinking: 'email', isAutoCreation: false });
    const erin = await user(ORG_B, 'erin', 'erin@example.com', true);
    const decided = await decideFirstSignIn(ctx, p, account(p, 'sub-erin', { email: 'erin@example.com', emailVerified: true }), ORG_A);
    expect(decided.kind).toBe('choose');
    expect(await linkOf(p.id, 'sub-erin')).toBeUndefined();
    // Nor by linking explicitly.
    expect(await linkUser(ctx, p, erin, account(p, 'sub-erin'))).toBe(false);
  });

  it('counts only the served users: one in a served organization and one elsewhere still links', async () => {
    const p = await provider(ORG_A, { autoLinking: 'email' });
    const frank = await user(ORG_A, 'frank', 'frank@example.com', true);
    await user(ORG_B, 'frank-b', 'frank@example.com', true);
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-frank', { email: 'frank@example.com', emailVerified: true }), ORG_A)).toEqual({ kind: 'user', userId: frank, how: 'auto-linked' });
  });
});

describe('autoLinking username', () => {
  it('asks the person to sign in as the user of that login name first, then links', async () => {
    const p = await provider(ORG_A, { autoLinking: 'username' });
    const grace = await user(ORG_A, 'grace', null, false);
    const decided = await decideFirstSignIn(ctx, p, account(p, 'sub-grace', { userName: 'grace@a.test' }), ORG_A);
    expect(decided).toEqual({ kind: 'confirm', userId: grace });
    expect(await linkOf(p.id, 'sub-grace')).toBeUndefined();
    expect(await linkUser(ctx, p, grace, account(p, 'sub-grace', { userName: 'grace@a.test' }))).toBe(true);
    expect(await linkOf(p.id, 'sub-grace')).toEqual({ user_id: grace, external_user_name: 'grace@a.test' });
  });

  it('does not offer a user of another organization', async () => {
    const p = await provider(ORG_A, { autoLinking: 'username' });
    await user(ORG_B, 'heidi', null, false);
    expect((await decideFirstSignIn(ctx, p, account(p, 'sub-heidi', { userName: 'heidi@b.test' }), ORG_A)).kind).toBe('choose');
  });

  it('reads the preferred user name only: an email or subject that is a login name offers nobody', async () => {
    const p = await provider(ORG_A, { autoLinking: 'username' });
    await user(ORG_A, 'nina', 'nina@a.test', true);
    const withoutName = { ...account(p, 'nina@a.test', { email: 'nina@a.test' }), userName: 'nina@a.test' };
    expect(withoutName.profile.userName).toBeUndefined();
    expect((await decideFirstSignIn(ctx, p, withoutName, ORG_A)).kind).toBe('choose');
  });

  it('finds the name in the application\'s organization when another organization has a user of the same name', async () => {
    const p = await provider(ORG_A, { autoLinking: 'username' });
    const oscarA = await user(ORG_A, 'oscar', null, false);
    await user(ORG_B, 'oscar', null, false);
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-oscar', { userName: 'oscar' }), ORG_A)).toEqual({ kind: 'confirm', userId: oscarA });
    // For an application of B, B's oscar is found but not served, and the bare name names nobody.
    expect((await decideFirstSignIn(ctx, p, account(p, 'sub-oscar', { userName: 'oscar' }), ORG_B)).kind).toBe('choose');
    // The full login name still finds A's oscar for a request without an application.
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-oscar', { userName: 'oscar@a.test' }), undefined)).toEqual({ kind: 'confirm', userId: oscarA });
  });

  it('falls through to the next option when the name matches no user, or a user who may not sign in', async () => {
    const p = await provider(ORG_A, { autoLinking: 'username', isAutoCreation: true });
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-nomad', { userName: 'nomad' }), ORG_A)).toMatchObject({ kind: 'user', how: 'created' });
    await user(ORG_A, 'idle', null, false, 'inactive');
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-idle', { userName: 'idle@a.test' }), ORG_A)).toMatchObject({ kind: 'user', how: 'created' });
  });
});

describe('isAutoCreation', () => {
  it('creates a linked user without a password in the application\'s organization', async () => {
    const p = await provider(ORG_A, { isAutoCreation: true });
    const decided = await decideFirstSignIn(ctx, p, account(p, 'sub-ivan', { userName: 'ivan', givenName: 'Ivan', familyName: 'Petrov', email: 'ivan@example.com', emailVerified: true }), ORG_A);
    expect(decided).toMatchObject({ kind: 'user', how: 'created' });
    const userId = (decided as { userId: string }).userId;
    expect(await database.db.selectFrom('users').select(['org_id', 'user_name', 'given_name', 'family_name', 'email', 'email_verified', 'password_hash']).where('id', '=', userId).executeTakeFirst()).toEqual({
      org_id: ORG_A, user_name: 'ivan', given_name: 'Ivan', family_name: 'Petrov', email: 'ivan@example.com', email_verified: true, password_hash: null,
    });
    expect((await linkOf(p.id, 'sub-ivan'))?.user_id).toBe(userId);
    const added = await database.db.selectFrom('events').select('event_type').where('aggregate_id', '=', userId).execute();
    expect(added.map((e) => e.event_type)).toEqual(expect.arrayContaining(['user.human.added', 'user.human.externalidp.added']));
  });

  it('takes a free user name: the email when the upstream has none, a number appended when taken', async () => {
    const p = await provider(ORG_A, {});
    await user(ORG_A, 'judy', null, false);
    expect(await freeUserName(database.db, INSTANCE, account(p, 'sub-judy', { userName: 'judy' }))).toBe('judy-2');
    expect(await freeUserName(database.db, INSTANCE, { ...account(p, 'sub-x'), profile: { emailVerified: false, phoneVerified: false, email: 'x@example.com' } })).toBe('x@example.com');
    expect(await freeUserName(database.db, INSTANCE, account(p, 'sub-y', { userName: 'has space' }))).toBe('has_space');
  });

  it('trusts no unverified upstream address', async () => {
    const p = await provider(ORG_A, { isAutoCreation: true });
    const decided = await decideFirstSignIn(ctx, p, account(p, 'sub-ken', { email: 'ken@example.com', emailVerified: false }), ORG_A);
    const userId = (decided as { userId: string }).userId;
    expect((await database.db.selectFrom('users').select('email_verified').where('id', '=', userId).executeTakeFirstOrThrow()).email_verified).toBe(false);
  });

  it('creates nobody for a request without an application, or in an organization the provider does not serve', async () => {
    const p = await provider(ORG_A, { isAutoCreation: true, isCreationAllowed: true, isLinkingAllowed: true });
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-none'), undefined)).toEqual({ kind: 'choose', canLink: true, canCreate: false });
    expect(await decideFirstSignIn(ctx, p, account(p, 'sub-none'), ORG_B)).toEqual({ kind: 'choose', canLink: true, canCreate: false });
    expect(await linkOf(p.id, 'sub-none')).toBeUndefined();
  });
});

describe('nothing found', () => {
  it('offers what the provider allows', async () => {
    const none = await provider(ORG_A, {});
    expect(await decideFirstSignIn(ctx, none, account(none, 'sub-n'), ORG_A)).toEqual({ kind: 'choose', canLink: false, canCreate: false });
    const both = await provider(ORG_A, { isLinkingAllowed: true, isCreationAllowed: true });
    expect(await decideFirstSignIn(ctx, both, account(both, 'sub-n'), ORG_A)).toEqual({ kind: 'choose', canLink: true, canCreate: true });
  });

  it('creates a user from the form, linked; a second link of the same account is refused', async () => {
    const p = await provider(ORG_A, { isCreationAllowed: true });
    const userId = await createLinkedUser(ctx, p, account(p, 'sub-form', { email: 'up@example.com', emailVerified: true }), ORG_A, {
      userName: 'chosen', givenName: 'Chosen', familyName: 'Name', email: 'other@example.com',
    });
    expect(await database.db.selectFrom('users').select(['user_name', 'email', 'email_verified']).where('id', '=', userId).executeTakeFirst()).toEqual({
      user_name: 'chosen', email: 'other@example.com', email_verified: false, // the upstream vouched for another address
    });
    const other = await user(ORG_A, 'other-form', null, false);
    expect(await linkUser(ctx, p, other, account(p, 'sub-form'))).toBe(false);
  });
});

describe('the providers the login name page offers (the directory\'s cache)', () => {
  it('lists the active providers of the policy in force, with the origin the button goes to; none while external sign-in is off', async () => {
    const listed = await provider(ORG_B, {});
    const directory = new Directory(database.db);
    const offered = (await directory.orgSettings(INSTANCE, ORG_B)).idps;
    expect(offered).toContainEqual({ id: listed.id, name: listed.name, origin: 'https://upstream.example.com' });
    // C follows the instance's policy, which lists providers but allows no external sign-in.
    await provider(undefined, {}, [undefined]);
    expect((await directory.orgSettings(INSTANCE, ORG_C)).idps).toEqual([]);
    expect((await directory.orgSettings(INSTANCE, ORG_A)).idps.some((idp) => idp.id === listed.id)).toBe(false);
  });
});
