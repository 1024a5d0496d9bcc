/**
 * Passkeys in the domain (docs/passkeys.md; docs/security.md 10.3, 10.11), with a software
 * authenticator (support/webauthn.ts) against a real server whose external URL is
 * http://localhost:PORT: the relying party, registration and its refusals and expiry, username-less
 * and user-bound sign-ins, every refusal with one outcome, the counter check and the cloned mark,
 * lockout counting, removal and registration codes.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import type { Gatehouse } from '../../src/context.ts';
import { clearLockout, LOCKOUT_THRESHOLD } from '../../src/domain/sign-in/lockout.ts';
import { issuePasskeyCode } from '../../src/domain/passkeys/passkey-codes.ts';
import { passkeyRegistrationMail } from '../../src/mail/messages.ts';
import { passkeyStatus, relyingParty } from '../../src/domain/passkeys/passkey-party.ts';
import { finishPasskeySignIn, startPasskeySignIn, type FinishSignInInput } from '../../src/domain/passkeys/passkey-sign-in.ts';
import { finishPasskeyRegistration, startedWithCodeBy, startPasskeyRegistration } from '../../src/domain/passkeys/passkey-registration.ts';
import { hasReadyPasskey, listPasskeys, loadPasskeyUser, PasskeysDisabled, removePasskey, type PasskeyUser } from '../../src/domain/passkeys/passkeys.ts';
import { MailLimitReached } from '../../src/domain/credentials/email-codes.ts';
import { TemplateError } from '../../src/mail/template.ts';
import { Mailbox, nthMailTo, partOf } from '../mail/mailbox.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { managementDocument, MGMT } from '../support/management.ts';
import { freePort } from '../support/ports.ts';
import { SoftAuthenticator } from '../support/webauthn.ts';

const PASSWORD = 'Correct-Horse-9';
const person = (n: number) => ({ id: `26000000000000000${n}`, userName: `pk-${n}`, password: PASSWORD, email: `pk-${n}@managed.test`, emailVerified: true, givenName: `Pat${n}` });
const USERS = {
  /** Without a password: a passkey is its only way in. */
  passwordless: '269000000000000001',
  german: '269000000000000002',
};

let server: TestServer;
let gh: Gatehouse;
let origin: string;
// The mail worker empties a sent (or, without SMTP, logged) message's bodies (docs/security.md 10.2): the test
// reads them from the mail as delivered, since reading the outbox raced the worker.
const mailbox = new Mailbox();

beforeAll(async () => {
  await mailbox.start(0);
  const port = await freePort();
  origin = `http://localhost:${port}`;
  server = await startTestServer(
    managementDocument({
      users: [
        ...Array.from({ length: 10 }, (_, n) => person(n)),
        { id: USERS.passwordless, userName: 'pk-passwordless', email: 'pk-passwordless@managed.test', emailVerified: true },
        { id: USERS.german, userName: 'pk-german', password: PASSWORD, email: 'pk-german@managed.test', emailVerified: true, preferredLanguage: 'de', givenName: 'Jonas' },
      ],
    }),
    { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: origin, GATEHOUSE_SMTP_URL: mailbox.url },
  );
  gh = server.running.gh;
});
afterAll(() => Promise.all([server.stop(), mailbox.stop()]));

async function user(id: string): Promise<PasskeyUser> {
  const loaded = await loadPasskeyUser(gh.db, gh.instanceId, id);
  if (loaded === undefined) throw new Error(`no user ${id}`);
  return loaded;
}

/** A registration started and answered by `authenticator`; resolves to the finish result and the passkey id. */
async function register(userId: string, authenticator: SoftAuthenticator, name = 'Laptop') {
  const started = await startPasskeyRegistration(gh, await user(userId), { creator: userId });
  if (started.kind !== 'started') throw new Error('not started');
  const credential = authenticator.create(started.registration.options);
  const finished = await finishPasskeyRegistration(gh, await user(userId), { passkeyId: started.registration.passkeyId, credential, name, creator: userId });
  return { finished, passkeyId: started.registration.passkeyId, options: started.registration.options };
}

async function signIn(authenticator: SoftAuthenticator, options: { userId?: string; tweaks?: Parameters<SoftAuthenticator['get']>[1]; extra?: Partial<FinishSignInInput> } = {}, now?: Date) {
  const challenge = await startPasskeySignIn(gh, options.userId === undefined ? {} : { userId: options.userId });
  const credential = authenticator.get(challenge.options, options.tweaks);
  return finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential, ...options.extra }, now);
}

function failedAttempts(userId: string) {
  return gh.db.selectFrom('users').select(['failed_attempts', 'locked_until']).where('id', '=', userId).executeTakeFirstOrThrow();
}

function eventsOf(userId: string) {
  return gh.db.selectFrom('events').select(['event_type', 'creator', 'payload']).where('aggregate_id', '=', userId).where('event_type', 'like', 'user.human.passwordless%').orderBy('sequence').execute();
}

describe('the relying party', () => {
  it('is the external URL host and origin, with an override for a domain the host belongs to', () => {
    expect(relyingParty({ externalUrl: 'https://login.example.com', webauthnRpId: undefined })).toEqual({ enabled: true, id: 'login.example.com', origin: 'https://login.example.com' });
    expect(relyingParty({ externalUrl: 'https://login.example.com:8443', webauthnRpId: 'example.com' })).toEqual({ enabled: true, id: 'example.com', origin: 'https://login.example.com:8443' });
    expect(relyingParty({ externalUrl: origin, webauthnRpId: undefined })).toEqual({ enabled: true, id: 'localhost', origin });
  });

  it.each([
    ['an IPv4 host', 'http://127.0.0.1:8080', /IP address/],
    ['an IPv6 host', 'https://[::1]:8443', /IP address/],
    ['plain http elsewhere than localhost', 'http://login.example.com', /https origins only/],
  ])('is disabled for %s, saying why', (_name, externalUrl, reason) => {
    const party = relyingParty({ externalUrl, webauthnRpId: undefined });
    expect(party).toEqual({ enabled: false, reason: expect.stringMatching(reason) });
    expect(passkeyStatus({ externalUrl, webauthnRpId: undefined })).toEqual({ enabled: false, message: expect.stringMatching(/^passkeys are disabled: /) });
  });

  it('refuses an override that is no domain of the external host', () => {
    const base = { GATEHOUSE_EXTERNAL_URL: 'https://login.example.com' };
    expect(loadConfig({ ...base, GATEHOUSE_WEBAUTHN_RP_ID: 'Example.COM' }).webauthnRpId).toBe('example.com');
    for (const rpId of ['other.com', 'ample.com', 'https://example.com', '10.0.0.1', 'example.com:443', '-bad.com']) {
      expect(() => loadConfig({ ...base, GATEHOUSE_WEBAUTHN_RP_ID: rpId })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ GATEHOUSE_EXTERNAL_URL: 'http://127.0.0.1:8080', GATEHOUSE_WEBAUTHN_RP_ID: 'localhost' })).toThrow(ConfigError);
  });

  it('stops every ceremony with PasskeysDisabled when the host is an IP address', async () => {
    const ipGh: Gatehouse = { ...gh, config: { ...gh.config, externalUrl: 'http://127.0.0.1:9999' } };
    await expect(startPasskeyRegistration(ipGh, await user(person(9).id), { creator: 'x' })).rejects.toThrow(PasskeysDisabled);
    await expect(startPasskeySignIn(ipGh)).rejects.toThrow(PasskeysDisabled);
    await expect(finishPasskeySignIn(ipGh, { challengeId: '1', credential: {} })).rejects.toThrow(/IP address/);
  });
});

describe('registration', () => {
  it('asks for a discoverable credential with user verification and registers it', async () => {
    const authenticator = new SoftAuthenticator(origin);
    const { finished, passkeyId, options } = await register(person(0).id, authenticator, 'My phone');
    expect(finished.kind).toBe('verified');
    expect(options).toMatchObject({
      rp: { id: 'localhost', name: 'Managed' },
      user: { id: Buffer.from(person(0).id).toString('base64url'), name: 'pk-0@managed.test', displayName: 'Pat0' },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -8, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: 300_000,
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await listPasskeys(gh.db, person(0).id)).toEqual([{ id: passkeyId, state: 'ready', name: 'My phone', createdAt: expect.any(Date), lastUsedAt: null, possiblyCloned: false }]);
    expect(await hasReadyPasskey(gh.db, person(0).id)).toBe(true);
    expect(await hasReadyPasskey(gh.db, person(0).id, 'example.com')).toBe(false);
    const row = await gh.db.selectFrom('passkeys').selectAll().where('id', '=', passkeyId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ credential_id: authenticator.credentials[0]!.id.toString('base64url'), transports: ['internal', 'hybrid'], challenge: null, expires_at: null, rp_id: 'localhost' });
    expect((await eventsOf(person(0).id)).map((e) => [e.event_type, e.creator])).toEqual([
      ['user.human.passwordless.token.added', person(0).id],
      ['user.human.passwordless.token.verified', person(0).id],
    ]);

    // The next registration excludes the credential, and the same authenticator cannot add it twice.
    const again = await startPasskeyRegistration(gh, await user(person(0).id), { creator: person(0).id, attachment: 'cross-platform' });
    if (again.kind !== 'started') throw new Error('not started');
    expect(again.registration.options.excludeCredentials).toEqual([{ id: row.credential_id, type: 'public-key', transports: ['internal', 'hybrid'] }]);
    expect(again.registration.options.authenticatorSelection?.authenticatorAttachment).toBe('cross-platform');
    expect(() => authenticator.create(again.registration.options)).toThrow(/excluded/);
  });

  it.each([
    ['another origin', { origin: 'https://evil.example' }],
    ['another relying party id', { rpId: 'evil.example' }],
    ['no user verification', { userVerified: false }],
    ['another challenge', { challenge: Buffer.alloc(32, 1).toString('base64url') }],
  ])('refuses a credential made with %s', async (_name, tweaks) => {
    const started = await startPasskeyRegistration(gh, await user(person(1).id), { creator: 'admin' });
    if (started.kind !== 'started') throw new Error('not started');
    const credential = new SoftAuthenticator(origin).create(started.registration.options, tweaks);
    const result = await finishPasskeyRegistration(gh, await user(person(1).id), { passkeyId: started.registration.passkeyId, credential, name: 'x', creator: 'admin' });
    expect(result).toEqual({ kind: 'invalid' });
  });

  it('refuses what is not a credential, a registration it does not know, and a second verification', async () => {
    const me = await user(person(1).id);
    const started = await startPasskeyRegistration(gh, me, { creator: me.id });
    if (started.kind !== 'started') throw new Error('not started');
    const passkeyId = started.registration.passkeyId;
    for (const credential of [null, 'text', [], { id: 'a', rawId: 'b', type: 'public-key', response: {} }, { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 1 } }]) {
      expect(await finishPasskeyRegistration(gh, me, { passkeyId, credential, name: 'x', creator: me.id })).toEqual({ kind: 'invalid' });
    }
    const credential = new SoftAuthenticator(origin).create(started.registration.options);
    expect(await finishPasskeyRegistration(gh, await user(person(2).id), { passkeyId, credential, name: 'x', creator: me.id })).toEqual({ kind: 'not_found' });
    expect(await finishPasskeyRegistration(gh, me, { passkeyId: '1', credential, name: 'x', creator: me.id })).toEqual({ kind: 'not_found' });
    expect((await finishPasskeyRegistration(gh, me, { passkeyId, credential, name: 'x', creator: me.id })).kind).toBe('verified');
    expect(await finishPasskeyRegistration(gh, me, { passkeyId, credential, name: 'x', creator: me.id })).toEqual({ kind: 'already_ready' });
  });

  it('refuses a credential registered already, even attested again for a new challenge', async () => {
    const authenticator = new SoftAuthenticator(origin);
    expect((await register(person(2).id, authenticator)).finished.kind).toBe('verified');
    const started = await startPasskeyRegistration(gh, await user(person(3).id), { creator: MGMT.iamAdmin });
    if (started.kind !== 'started') throw new Error('not started');
    const credential = authenticator.create({ ...started.registration.options, excludeCredentials: [] }, { existing: authenticator.credentials[0]! });
    const result = await finishPasskeyRegistration(gh, await user(person(3).id), { passkeyId: started.registration.passkeyId, credential, name: 'x', creator: MGMT.iamAdmin });
    expect(result).toEqual({ kind: 'exists' });
  });

  it('lets a registration lapse after 5 minutes, and replaces a pending one with a new one', async () => {
    const me = await user(person(4).id);
    const t0 = new Date();
    const first = await startPasskeyRegistration(gh, me, { creator: me.id }, t0);
    const second = await startPasskeyRegistration(gh, me, { creator: me.id }, t0);
    if (first.kind !== 'started' || second.kind !== 'started') throw new Error('not started');
    expect(second.registration.expiresAt).toEqual(new Date(t0.getTime() + 300_000));
    const pending = await listPasskeys(gh.db, me.id, t0);
    expect(pending).toEqual([expect.objectContaining({ id: second.registration.passkeyId, state: 'pending', name: '' })]);
    expect(await listPasskeys(gh.db, me.id, new Date(t0.getTime() + 300_001))).toEqual([]);
    const credential = new SoftAuthenticator(origin).create(second.registration.options);
    expect(await finishPasskeyRegistration(gh, me, { passkeyId: first.registration.passkeyId, credential, name: 'x', creator: me.id })).toEqual({ kind: 'not_found' });
    expect(await finishPasskeyRegistration(gh, me, { passkeyId: second.registration.passkeyId, credential, name: 'x', creator: me.id }, new Date(t0.getTime() + 300_001))).toEqual({ kind: 'expired' });
    expect(await hasReadyPasskey(gh.db, me.id)).toBe(false);
  });
});

describe('signing in', () => {
  let authenticator: SoftAuthenticator;
  const owner = person(5).id;

  beforeAll(async () => {
    authenticator = new SoftAuthenticator(origin);
    expect((await register(owner, authenticator)).finished.kind).toBe('verified');
  });

  it('username-less: no allowCredentials; two factors in one, at the time of the assertion; the challenge is used once', async () => {
    const challenge = await startPasskeySignIn(gh);
    expect(challenge.options).toEqual({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), rpId: 'localhost', timeout: 300_000, userVerification: 'required' });
    const credential = authenticator.get(challenge.options);
    const at = new Date();
    const result = await finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential }, at);
    expect(result).toEqual({ kind: 'signed_in', userId: owner, orgId: MGMT.org, passkeyId: expect.any(String), amr: ['user', 'mfa'], authTime: at });
    const [listed] = await listPasskeys(gh.db, owner);
    expect(listed?.lastUsedAt).toEqual(at);
    const row = await gh.db.selectFrom('passkeys').select('sign_count').where('user_id', '=', owner).executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(authenticator.credentials[0]!.signCount);
    expect(await finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential: authenticator.get(challenge.options) })).toEqual({ kind: 'refused' });
  });

  it('for a known user: its credentials as allowCredentials, and only those', async () => {
    const challenge = await startPasskeySignIn(gh, { userId: owner });
    expect(challenge.options.allowCredentials).toEqual([{ id: authenticator.credentials[0]!.id.toString('base64url'), type: 'public-key', transports: ['internal', 'hybrid'] }]);
    expect((await finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential: authenticator.get(challenge.options) })).kind).toBe('signed_in');

    // Another user's own valid passkey, presented for this user: refused, counted on this user only.
    const other = new SoftAuthenticator(origin);
    expect((await register(person(6).id, other)).finished.kind).toBe('verified');
    const before = await failedAttempts(owner);
    const forced = { credentialId: other.credentials[0]!.id.toString('base64url') }; // what no browser would send
    expect(await signIn(other, { userId: owner, tweaks: forced })).toEqual({ kind: 'refused' });
    expect((await failedAttempts(owner)).failed_attempts).toBe(before.failed_attempts + 1);
    expect((await failedAttempts(person(6).id)).failed_attempts).toBe(0);
    await clearLockout(gh.db, owner);
  });

  it.each([
    ['another relying party id', { tweaks: { rpId: 'evil.example' } }],
    ['another origin', { tweaks: { origin: 'https://evil.example' } }],
    ['a tampered signature', { tweaks: { tamper: true } }],
    ['no user verification', { tweaks: { userVerified: false } }],
    ['another challenge signed', { tweaks: { challenge: Buffer.alloc(32, 2).toString('base64url') } }],
    ['a user handle of someone else', { tweaks: { userHandle: Buffer.from(person(6).id).toString('base64url') } }],
  ])('refuses %s with the one answer, counted towards the lockout', async (_name, { tweaks }) => {
    const before = (await failedAttempts(owner)).failed_attempts;
    expect(await signIn(authenticator, { tweaks })).toEqual({ kind: 'refused' });
    expect((await failedAttempts(owner)).failed_attempts).toBe(before + 1);
    await clearLockout(gh.db, owner);
  });

  it('refuses an unknown credential, a lapsed or unknown challenge and what is not an assertion, with the same answer', async () => {
    const stranger = new SoftAuthenticator(origin);
    stranger.create({ challenge: 'AAAA', rp: { id: 'localhost', name: 'x' }, user: { id: 'eA', name: 'x', displayName: 'x' }, pubKeyCredParams: [{ alg: -7 }] });
    expect(await signIn(stranger)).toEqual({ kind: 'refused' });
    const challenge = await startPasskeySignIn(gh);
    expect(await finishPasskeySignIn(gh, { challengeId: challenge.challengeId, credential: authenticator.get(challenge.options) }, new Date(Date.now() + 300_001))).toEqual({ kind: 'refused' });
    expect(await finishPasskeySignIn(gh, { challengeId: 'nope', credential: authenticator.get(challenge.options) })).toEqual({ kind: 'refused' });
    for (const credential of [undefined, 42, { id: 'x' }, { ...authenticator.get(challenge.options), type: 'password' }]) {
      const fresh = await startPasskeySignIn(gh);
      expect(await finishPasskeySignIn(gh, { challengeId: fresh.challengeId, credential })).toEqual({ kind: 'refused' });
    }
    await clearLockout(gh.db, owner);
  });

  it('accepts a counter that stays 0 (authenticators without one)', async () => {
    const zero = new SoftAuthenticator(origin);
    expect((await register(person(7).id, zero)).finished.kind).toBe('verified');
    for (let i = 0; i < 2; i++) expect((await signIn(zero, { tweaks: { counter: 0 } })).kind).toBe('signed_in');
  });

  it('refuses a counter that goes backwards, marks the credential possibly cloned (event and log), and refuses it from then on', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const watched: Gatehouse = { ...gh, log };
    const cloned = new SoftAuthenticator(origin);
    const userId = person(8).id;
    const { passkeyId } = await register(userId, cloned);
    const signInWatched = async (counter: number) => {
      const challenge = await startPasskeySignIn(watched);
      return finishPasskeySignIn(watched, { challengeId: challenge.challengeId, credential: cloned.get(challenge.options, { counter }) });
    };
    expect((await signInWatched(5)).kind).toBe('signed_in');
    expect(await signInWatched(3)).toEqual({ kind: 'refused' });
    const row = await gh.db.selectFrom('passkeys').select(['possibly_cloned', 'sign_count']).where('id', '=', passkeyId).executeTakeFirstOrThrow();
    expect(row).toEqual({ possibly_cloned: true, sign_count: '5' });
    const events = await eventsOf(userId);
    expect(events.at(-1)).toMatchObject({ event_type: 'user.human.passwordless.token.cloned', payload: { passkeyId, storedCounter: 5, presentedCounter: 3 } });
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ level: 40, event: 'passkey.possibly_cloned', passkeyId, userId }));
    expect(await signInWatched(10)).toEqual({ kind: 'refused' });
    expect((await listPasskeys(gh.db, userId))[0]?.possiblyCloned).toBe(true);
    expect((await failedAttempts(userId)).failed_attempts).toBe(2);
  });

  it(`locks the user after ${LOCKOUT_THRESHOLD} refusals; then only a valid passkey learns of the lock`, async () => {
    const userId = person(9).id;
    const mine = new SoftAuthenticator(origin);
    expect((await register(userId, mine)).finished.kind).toBe('verified');
    for (let i = 0; i < LOCKOUT_THRESHOLD; i++) expect(await signIn(mine, { tweaks: { tamper: true } })).toEqual({ kind: 'refused' });
    const { locked_until: until } = await failedAttempts(userId);
    expect(until!.getTime()).toBeGreaterThan(Date.now());
    expect(await signIn(mine, { tweaks: { tamper: true } })).toEqual({ kind: 'refused' });
    expect(await signIn(mine)).toEqual({ kind: 'locked', until });
    await clearLockout(gh.db, userId);
    expect((await signIn(mine)).kind).toBe('signed_in');
  });

  it('answers a valid passkey of a deactivated user with inactive', async () => {
    await gh.db.updateTable('users').set({ state: 'inactive' }).where('id', '=', person(7).id).execute();
    const zero = new SoftAuthenticator(origin);
    expect((await register(person(7).id, zero)).finished.kind).toBe('verified');
    expect(await signIn(zero, { userId: person(7).id })).toEqual({ kind: 'inactive' });
    await gh.db.updateTable('users').set({ state: 'active' }).where('id', '=', person(7).id).execute();
  });

  it('limits refusals per client address before checking anything', async () => {
    const stranger = new SoftAuthenticator(origin);
    stranger.create({ challenge: 'AAAA', rp: { id: 'localhost', name: 'x' }, user: { id: 'eA', name: 'x', displayName: 'x' }, pubKeyCredParams: [{ alg: -7 }] });
    const address = '203.0.113.9';
    for (let i = 0; i < gh.config.failedAuthRateLimit; i++) expect(await signIn(stranger, { extra: { address } })).toEqual({ kind: 'refused' });
    expect(await signIn(stranger, { extra: { address } })).toEqual({ kind: 'throttled', retryAfterSeconds: expect.any(Number) });
  });
});

describe('removal', () => {
  it('a removed passkey is not listed and no longer signs in', async () => {
    const mine = new SoftAuthenticator(origin);
    const me = await user(person(3).id);
    const { passkeyId } = await register(me.id, mine);
    expect(await removePasskey(gh, me, passkeyId, { creator: me.id, byAdministrator: false })).toEqual({ kind: 'removed', details: expect.objectContaining({ resourceOwner: MGMT.org }) });
    expect((await listPasskeys(gh.db, me.id)).map((p) => p.id)).not.toContain(passkeyId);
    expect(await signIn(mine)).toEqual({ kind: 'refused' });
    expect(await removePasskey(gh, me, passkeyId, { creator: me.id, byAdministrator: false })).toEqual({ kind: 'not_found' });
    expect((await eventsOf(me.id)).at(-1)?.event_type).toBe('user.human.passwordless.token.removed');
  });

  it('keeps a user without a password from removing its last passkey; an administrator may', async () => {
    const me = await user(USERS.passwordless);
    const first = await register(me.id, new SoftAuthenticator(origin));
    const second = await register(me.id, new SoftAuthenticator(origin));
    expect((await removePasskey(gh, me, first.passkeyId, { creator: me.id, byAdministrator: false })).kind).toBe('removed');
    expect(await removePasskey(gh, me, second.passkeyId, { creator: me.id, byAdministrator: false })).toEqual({ kind: 'last_sign_in_method' });
    expect((await removePasskey(gh, me, second.passkeyId, { creator: MGMT.iamAdmin, byAdministrator: true })).kind).toBe('removed');
  });
});

describe('registration codes', () => {
  const codeUser = (row: PasskeyUser, email: string, language: string | null = null) => ({ id: row.id, instanceId: row.instanceId, orgId: row.orgId, email, preferredLanguage: language, name: 'Jonas' });
  const context = () => ({ externalUrl: origin, creator: MGMT.iamAdmin });

  it('a returned code starts one registration for whoever holds it, who may finish it', async () => {
    const me = await user(person(6).id);
    const issued = await gh.db.transaction().execute((trx) => issuePasskeyCode(trx, codeUser(me, 'pk-6@managed.test'), { kind: 'return' }, context()));
    expect(issued.code).toMatch(/^[A-Za-z0-9]{12}$/);
    const holder = MGMT.plain;
    const wrong = await startPasskeyRegistration(gh, me, { creator: holder, code: { id: issued.codeId, code: 'WRONGWRONG12', holder } });
    expect(wrong).toEqual({ kind: 'invalid_code' });
    expect(await gh.db.selectFrom('passkey_codes').select('attempts').where('user_id', '=', me.id).executeTakeFirstOrThrow()).toEqual({ attempts: 1 });
    expect(await startPasskeyRegistration(gh, me, { creator: holder, code: { id: '1', code: issued.code!, holder } })).toEqual({ kind: 'invalid_code' });
    // a wrong code id is refused alike but spends no try: only the link carries the id
    expect(await startPasskeyRegistration(gh, me, { creator: holder, code: { id: '1', code: 'WRONGWRONG12', holder } })).toEqual({ kind: 'invalid_code' });
    expect(await gh.db.selectFrom('passkey_codes').select('attempts').where('user_id', '=', me.id).executeTakeFirstOrThrow()).toEqual({ attempts: 1 });
    const started = await startPasskeyRegistration(gh, me, { creator: holder, code: { id: issued.codeId, code: issued.code!, holder } });
    if (started.kind !== 'started') throw new Error('not started');
    expect(await startedWithCodeBy(gh.db, me.id, started.registration.passkeyId, holder)).toBe(true);
    expect(await startedWithCodeBy(gh.db, me.id, started.registration.passkeyId, MGMT.orgAdmin)).toBe(false);
    expect(await startPasskeyRegistration(gh, me, { creator: holder, code: { id: issued.codeId, code: issued.code!, holder } })).toEqual({ kind: 'invalid_code' });
    const credential = new SoftAuthenticator(origin).create(started.registration.options);
    expect((await finishPasskeyRegistration(gh, me, { passkeyId: started.registration.passkeyId, credential, name: 'From a link', creator: holder })).kind).toBe('verified');
    expect(await startedWithCodeBy(gh.db, me.id, started.registration.passkeyId, holder)).toBe(false);
  });

  it('a code is void after an hour and after 5 wrong tries', async () => {
    const me = await user(person(6).id);
    const t0 = new Date();
    const issued = await gh.db.transaction().execute((trx) => issuePasskeyCode(trx, codeUser(me, 'pk-6@managed.test'), { kind: 'return' }, context(), t0));
    const code = { id: issued.codeId, code: issued.code!, holder: MGMT.plain };
    expect(await startPasskeyRegistration(gh, me, { creator: 'x', code }, new Date(t0.getTime() + 3_600_001))).toEqual({ kind: 'invalid_code' });
    for (let i = 0; i < 5; i++) await startPasskeyRegistration(gh, me, { creator: 'x', code: { ...code, code: 'x' } });
    expect(await startPasskeyRegistration(gh, me, { creator: 'x', code }, t0)).toEqual({ kind: 'invalid_code' });
  });

  it('mails a link to Gatehouse\'s passkey page (or where the template leads, within docs/security.md 10.2), in the user\'s language', async () => {
    const me = await user(USERS.german);
    const issued = await gh.db.transaction().execute((trx) => issuePasskeyCode(trx, codeUser(me, 'pk-german@managed.test', 'de'), { kind: 'send' }, context()));
    expect(issued.code).toBeUndefined();
    const mail = await gh.db.selectFrom('outbox').select(['recipient', 'subject']).where('user_id', '=', me.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(mail.recipient).toBe('pk-german@managed.test');
    expect(mail.subject).toBe('Füge deinem Konto einen Passkey hinzu');
    const text = partOf((await nthMailTo(mailbox, 'pk-german@managed.test', 1)).raw, 'text/plain') ?? '';
    const link = /(http:\/\/localhost:\d+\/ui\/login\/passkeys\?\S+)/.exec(text)?.[1];
    expect(new URL(link!).searchParams.get('codeID')).toBe(issued.codeId);
    expect(new URL(link!).searchParams.get('userID')).toBe(me.id);
    expect(new URL(link!).searchParams.get('code')).toMatch(/^[A-Za-z0-9]{12}$/);

    const templated = await gh.db.transaction().execute((trx) =>
      issuePasskeyCode(trx, codeUser(me, 'pk-german@managed.test'), { kind: 'send', urlTemplate: `${origin}/own?c={{ .CodeID }}&u={{.UserID}}` }, context()),
    );
    expect(partOf((await nthMailTo(mailbox, 'pk-german@managed.test', 2)).raw, 'text/plain')).toContain(`${origin}/own?c=${templated.codeId}&u=${me.id}`);
    await expect(
      gh.db.transaction().execute((trx) => issuePasskeyCode(trx, codeUser(me, 'pk-german@managed.test'), { kind: 'send', urlTemplate: 'https://evil.example/{{.Code}}' }, context())),
    ).rejects.toThrow(TemplateError);
    expect(passkeyRegistrationMail({ language: 'en', link: 'https://x.test/<a>' }).html).toContain('https://x.test/&lt;a&gt;');
  });

  it('keeps to the code mail limits', async () => {
    const me = await user(person(4).id);
    const send = () => gh.db.transaction().execute((trx) => issuePasskeyCode(trx, codeUser(me, `limit-${Math.random()}@managed.test`), { kind: 'send' }, context()));
    for (let i = 0; i < 5; i++) await send();
    await expect(send()).rejects.toThrow(MailLimitReached);
  });
});
