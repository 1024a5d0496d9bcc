/**
 * Sign-ins at external providers as intents (domain/federation/intents.ts,
 * docs/federation.md#the-intent-calls), on a real database against real upstreams: node-oidc-provider
 * as an OpenID provider and a plain OAuth 2.0 server, a second Gatehouse, and a provider that
 * misbehaves. An intent succeeds once, is used once, keeps the provider's tokens sealed until then
 * and forgets them after; everything that goes wrong ends on the failure URL, and an answer that
 * belongs to no sign-in gets a 400.
 */
import { completeIntent, consumeIntent, IntentTokenRefused, INTENT_LIFETIME_SECONDS, startIntent, type IntentContext } from '../../src/domain/federation/intents.ts';
import { addProvider, anyProvider, NO_OPTIONS, type Provider, type ProviderInput } from '../../src/domain/federation/providers.ts';
import { MasterKey, sha256 } from '../../src/domain/kernel/crypto.ts';
import { Refusal } from '../../src/domain/kernel/refusals.ts';
import { pruneExpired } from '../../src/server/jobs.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { authorizeAtOidcProvider, startMisbehavingUpstream, startOidcUpstream, UPSTREAM_CLIENTS, type MisbehavingUpstream, type Misbehaviour, type OidcUpstream } from '../support/upstreams.ts';
import { ALICE, Browser, callbackOf, signIn, startLoginServer, type LoginServer } from '../login/support.ts';

const INSTANCE = '920000000000000001';
const ORG = '920000000000000002';
const USER = '920000000000000003';
const EXTERNAL = 'http://127.0.0.1:9';
const CALLBACK = `${EXTERNAL}/idps/callback`;
const SUCCESS = 'https://login.example.com/idp/process?requestId=r1';
const FAILURE = 'https://login.example.com/idp/failure';
const masterKey = new MasterKey(Buffer.alloc(32, 7).toString('base64'));

let database: FreshDatabase;
let ctx: IntentContext;
let upstream: OidcUpstream;
let shady: MisbehavingUpstream;
let oidc: Provider;
let plainOauth: Provider;
let shadyProvider: Provider;

async function provider(input: Omit<ProviderInput, 'scopes' | 'usePkce' | 'options'> & Partial<ProviderInput>): Promise<Provider> {
  const { id } = await database.db.transaction().execute((trx) =>
    addProvider(trx, { instanceId: INSTANCE, creator: 'test' }, { instanceId: INSTANCE }, { scopes: [], usePkce: false, options: NO_OPTIONS, ...input } as ProviderInput, { allowPrivateNetworks: true, masterKey }),
  );
  return anyProvider(database.db, INSTANCE, id);
}

/** Starts an intent, signs in as ada at node-oidc-provider, and returns the callback's parameters. */
async function signInAtUpstream(p: Provider = oidc, authRequestId?: string) {
  const started = await startIntent(ctx, { provider: p, successUrl: SUCCESS, failureUrl: FAILURE, ...(authRequestId ? { authRequestId } : {}) });
  const back = await authorizeAtOidcProvider(started.authUrl, 'ada', CALLBACK);
  const parameters = { state: back.searchParams.get('state') ?? undefined, code: back.searchParams.get('code') ?? undefined, iss: back.searchParams.get('iss') ?? undefined };
  return { started, parameters };
}

function redirectOf(outcome: Awaited<ReturnType<typeof completeIntent>>): URL {
  if (!('redirect' in outcome)) throw new Error(`expected a redirect, got ${outcome.status}: ${outcome.problem}`);
  return new URL(outcome.redirect);
}

async function rowOf(id: string) {
  return database.db.selectFrom('idp_intents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function refusalOf(promise: Promise<unknown>): Promise<Refusal> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(Refusal);
  return error as Refusal;
}

beforeAll(async () => {
  database = await freshDatabase();
  ctx = { db: database.db, instanceId: INSTANCE, externalUrl: EXTERNAL, masterKey, allowPrivateNetworks: true };
  await database.db.insertInto('instances').values({ id: INSTANCE, name: 'test', default_org_id: null, created_at: new Date() }).execute();
  await database.db.insertInto('orgs').values({ id: ORG, instance_id: INSTANCE, name: 'A', primary_domain: 'a.test', created_at: new Date(), changed_at: new Date() }).execute();
  await database.db.insertInto('users').values({
    id: USER, instance_id: INSTANCE, org_id: ORG, kind: 'human', user_name: 'ada', state: 'active', password_hash: null, email: 'ada@a.test', email_verified: true,
    phone: null, given_name: 'Ada', family_name: 'L', nickname: null, display_name: 'Ada L', preferred_language: null, gender: null,
    address: null, secret_hash: null, created_at: new Date(), changed_at: new Date(),
  }).execute();
  upstream = await startOidcUpstream(CALLBACK);
  shady = await startMisbehavingUpstream();
  oidc = await provider({ kind: 'oidc', name: 'Upstream', issuer: upstream.issuer, clientId: UPSTREAM_CLIENTS.oidc.clientId, clientSecret: UPSTREAM_CLIENTS.oidc.clientSecret, isIdTokenMapping: false });
  plainOauth = await provider({
    kind: 'oauth', name: 'Plain OAuth', clientId: UPSTREAM_CLIENTS.oauth.clientId, clientSecret: UPSTREAM_CLIENTS.oauth.clientSecret, scopes: ['openid', 'email'], usePkce: true,
    authorizationEndpoint: `${upstream.issuer}/auth`, tokenEndpoint: `${upstream.issuer}/token`, userEndpoint: `${upstream.issuer}/me`, idAttribute: 'id',
  });
  shadyProvider = await provider({ kind: 'oidc', name: 'Shady', issuer: shady.base, clientId: shady.clientId, clientSecret: shady.clientSecret, isIdTokenMapping: false });
});
afterAll(async () => {
  await upstream?.stop();
  await shady?.stop();
  await database?.close();
});
beforeEach(() => shady.misbehave({}));

describe('a sign-in at an OpenID provider', () => {
  it('sends the browser there with a random state, nonce and PKCE, and keeps only the hash of the state', async () => {
    const started = await startIntent(ctx, { provider: oidc, successUrl: SUCCESS, failureUrl: FAILURE, loginHint: 'ada' });
    const sent = new URL(started.authUrl);
    expect(sent.origin).toBe(upstream.issuer);
    const state = sent.searchParams.get('state')!;
    expect(state).toMatch(/^[\w-]{43}$/);
    expect(state).not.toBe(started.intentId); // an id is guessable; the state is not
    expect(sent.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(sent.searchParams.get('login_hint')).toBe('ada');
    expect(sent.searchParams.get('code_challenge_method')).toBe('S256');
    const row = await rowOf(started.intentId);
    expect(row).toMatchObject({ status: 'started', idp_id: oidc.id, state_hash: sha256(state), success_url: SUCCESS, failure_url: FAILURE, sealed_result: null });
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(INTENT_LIFETIME_SECONDS * 1000);
    // the nonce is sealed, not stored as sent
    expect(JSON.stringify(row)).not.toContain(sent.searchParams.get('nonce')!);
    expect(started.details.resourceOwner).toBe(INSTANCE);
  });

  it('succeeds once: the success URL gets id and token, the result is used once, and the tokens are gone after', async () => {
    const { started, parameters } = await signInAtUpstream(oidc, 'auth-request-1');
    const success = redirectOf(await completeIntent(ctx, parameters));
    expect(success.origin + success.pathname).toBe('https://login.example.com/idp/process');
    expect(success.searchParams.get('requestId')).toBe('r1'); // the success URL's own query stays
    expect(success.searchParams.get('id')).toBe(started.intentId);
    const token = success.searchParams.get('token')!;
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(success.searchParams.has('user')).toBe(false);

    const waiting = await rowOf(started.intentId);
    expect(waiting.status).toBe('succeeded');
    expect(waiting.token_hash).toBe(sha256(token));
    const intent = await consumeIntent(ctx, started.intentId, token);
    expect(intent).toMatchObject({
      intentId: started.intentId,
      instanceId: INSTANCE,
      providerId: oidc.id,
      authRequestId: 'auth-request-1',
      subject: 'ada',
      userName: 'ada.l',
      profile: { givenName: 'Ada', familyName: 'Lovelace', email: 'ada@example.org', emailVerified: true },
      amr: ['fed'],
      linkedUserId: undefined,
    });
    expect(intent.raw).toMatchObject({ sub: 'ada', email: 'ada@example.org' });
    expect(intent.tokens.accessToken).toEqual(expect.any(String));
    expect(intent.tokens.idToken!.split('.')).toHaveLength(3);
    // sealed while it waited: neither token was readable in the row
    expect(JSON.stringify(waiting)).not.toContain(intent.tokens.accessToken);
    expect(JSON.stringify(waiting)).not.toContain(intent.tokens.idToken!);

    const used = await rowOf(started.intentId);
    expect(used).toMatchObject({ status: 'consumed', sealed_result: null });
    const again = await refusalOf(consumeIntent(ctx, started.intentId, token));
    expect(again).toMatchObject({ kind: 'conflict', id: 'IDP-IntentNotSucceeded' });
  });

  it('names the linked user on the success URL and in the result', async () => {
    await database.db.insertInto('idp_links').values({ instance_id: INSTANCE, idp_id: oidc.id, user_id: USER, external_user_id: 'ada', external_user_name: 'ada.l', created_at: new Date() }).execute();
    try {
      const { started, parameters } = await signInAtUpstream();
      const success = redirectOf(await completeIntent(ctx, parameters));
      expect(success.searchParams.get('user')).toBe(USER);
      expect((await consumeIntent(ctx, started.intentId, success.searchParams.get('token')!)).linkedUserId).toBe(USER);
    } finally {
      await database.db.deleteFrom('idp_links').where('idp_id', '=', oidc.id).execute();
    }
  });

  it('refuses a wrong token without using the intent up, and an expired intent', async () => {
    const { started, parameters } = await signInAtUpstream();
    const token = redirectOf(await completeIntent(ctx, parameters)).searchParams.get('token')!;
    expect(await refusalOf(consumeIntent(ctx, started.intentId, `${token.slice(0, -2)}xx`))).toBeInstanceOf(IntentTokenRefused);
    expect(await refusalOf(consumeIntent(ctx, started.intentId, ''))).toBeInstanceOf(IntentTokenRefused);
    await database.db.updateTable('idp_intents').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', started.intentId).execute();
    expect(await refusalOf(consumeIntent(ctx, started.intentId, token))).toMatchObject({ kind: 'conflict', id: 'IDP-IntentExpired' });
    expect(await refusalOf(consumeIntent(ctx, 'no-such-intent', token))).toMatchObject({ kind: 'conflict', id: 'IDP-IntentNotSucceeded' });
  });

  it('ends a replayed callback (same state and code) on the failure URL, with one success only', async () => {
    const { started, parameters } = await signInAtUpstream();
    const [first, second] = await Promise.all([completeIntent(ctx, parameters), completeIntent(ctx, parameters)]);
    const outcomes = [redirectOf(first), redirectOf(second)];
    const successes = outcomes.filter((url) => url.href.startsWith(SUCCESS));
    expect(successes).toHaveLength(1);
    const failure = outcomes.find((url) => url.href.startsWith(FAILURE))!;
    expect(Object.fromEntries(failure.searchParams)).toEqual({ id: started.intentId, error: 'invalid_request', error_description: 'Upstream: this sign-in was finished already' });
    // and later once more
    expect(redirectOf(await completeIntent(ctx, parameters)).href.startsWith(FAILURE)).toBe(true);
    await consumeIntent(ctx, started.intentId, successes[0]!.searchParams.get('token')!);
  });

  it('answers 400 to an answer without a state or with one it never sent', async () => {
    expect(await completeIntent(ctx, { code: 'x' })).toEqual({ status: 400, problem: expect.stringContaining('no state parameter') });
    expect(await completeIntent(ctx, { state: 'forged', code: 'x' })).toEqual({ status: 400, problem: expect.stringContaining('unknown state') });
    const started = await startIntent(ctx, { provider: oidc, successUrl: SUCCESS, failureUrl: FAILURE });
    // the intent id is no state
    expect(await completeIntent(ctx, { state: started.intentId, code: 'x' })).toMatchObject({ status: 400 });
    expect((await rowOf(started.intentId)).status).toBe('started');
  });

  it("passes the provider's error on to the failure URL, cleaned, and the intent cannot be used", async () => {
    const started = await startIntent(ctx, { provider: oidc, successUrl: SUCCESS, failureUrl: FAILURE });
    const state = new URL(started.authUrl).searchParams.get('state')!;
    const failure = redirectOf(await completeIntent(ctx, { state, error: 'access_denied', errorDescription: 'The user said "no"\n<script>' }));
    expect(failure.origin + failure.pathname).toBe(FAILURE);
    expect(Object.fromEntries(failure.searchParams)).toEqual({ id: started.intentId, error: 'access_denied', error_description: 'Upstream answered access_denied: The user said no<script>' });
    expect((await rowOf(started.intentId)).status).toBe('failed');
    expect(await refusalOf(consumeIntent(ctx, started.intentId, 'anything'))).toBeInstanceOf(IntentTokenRefused);
  });

  it('ends an answer that comes after the hour on the failure URL', async () => {
    const { started, parameters } = await signInAtUpstream();
    await database.db.updateTable('idp_intents').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', started.intentId).execute();
    const failure = redirectOf(await completeIntent(ctx, parameters));
    expect(failure.searchParams.get('error_description')).toBe('Upstream: the sign-in took too long; start it again');
  });

  it('refuses bad success and failure URLs before going anywhere', async () => {
    expect(await refusalOf(startIntent(ctx, { provider: oidc, successUrl: '/relative', failureUrl: FAILURE }))).toMatchObject({ kind: 'invalid', field: 'urls.successUrl' });
    expect(await refusalOf(startIntent(ctx, { provider: oidc, successUrl: SUCCESS, failureUrl: 'javascript:alert(1)' }))).toMatchObject({ kind: 'invalid', field: 'urls.failureUrl' });
  });
});

describe('a sign-in at a plain OAuth 2.0 server', () => {
  it('takes the id attribute as the subject and vouches for nothing', async () => {
    const { started, parameters } = await signInAtUpstream(plainOauth);
    const token = redirectOf(await completeIntent(ctx, parameters)).searchParams.get('token')!;
    const intent = await consumeIntent(ctx, started.intentId, token);
    expect(intent.subject).toBe('4711');
    expect(intent.userName).toBeUndefined();
    expect(intent.profile).toEqual({ emailVerified: false, phoneVerified: false });
    expect(intent.raw).toMatchObject({ id: 4711, email: 'ada@example.org' });
    expect(intent.tokens).toEqual({ accessToken: expect.any(String) });
  });
});

describe('a provider that misbehaves', () => {
  async function roundTrip(p: Provider = shadyProvider) {
    const started = await startIntent(ctx, { provider: p, successUrl: SUCCESS, failureUrl: FAILURE });
    const answer = await fetch(started.authUrl, { redirect: 'manual' });
    const location = answer.headers.get('location');
    // Says what answered instead of the provider's redirect, should anything else ever hold its port.
    if (location === null) throw new Error(`${started.authUrl} answered ${answer.status} without a redirect: ${(await answer.text()).slice(0, 200)}`);
    const back = new URL(location);
    const outcome = redirectOf(await completeIntent(ctx, { state: back.searchParams.get('state')!, code: back.searchParams.get('code')! }));
    return { started, outcome };
  }

  it.each<[string, () => Misbehaviour, string]>([
    ['signs with another key', () => ({ signWith: shady.otherKey }), "Shady: the ID token's signature does not verify with the provider's keys"],
    ['echoes a wrong nonce', () => ({ nonce: 'not-the-nonce' }), 'Shady: wrong nonce'],
    ['claims another issuer', () => ({ iss: 'https://accounts.example.com' }), 'Shady: the ID token is not from this provider'],
    ['sends an expired ID token', () => ({ expiresIn: -120 }), 'Shady: the ID token has expired or is not valid yet'],
    ['describes another user', () => ({ userinfoSub: 'user-2' }), "Shady: the provider's user information is about another user"],
  ])('ends on the failure URL with the reason when it %s', async (_what, wrong, description) => {
    shady.misbehave(wrong());
    const { started, outcome } = await roundTrip();
    expect(outcome.origin + outcome.pathname).toBe(FAILURE);
    expect(Object.fromEntries(outcome.searchParams)).toEqual({ id: started.intentId, error: 'access_denied', error_description: description });
    expect(outcome.href).not.toContain('at-1'); // its access token
    const row = await rowOf(started.intentId);
    expect(row).toMatchObject({ status: 'failed', sealed_result: null });
  });

  it('ends on the failure URL when its token endpoint cannot be reached', async () => {
    const unreachable = await provider({
      kind: 'oauth', name: 'Gone', clientId: 'rp', clientSecret: 'rp-secret', authorizationEndpoint: `${shady.base}/authorize`, tokenEndpoint: 'http://127.0.0.1:9/token',
      userEndpoint: `${shady.base}/user`, idAttribute: 'sub',
    });
    const { outcome } = await roundTrip(unreachable);
    expect(outcome.searchParams.get('error_description')).toBe('Gone: the provider could not be reached');
  });

  it('is refused at the start when its discovery cannot be read', async () => {
    const down = await provider({ kind: 'oidc', name: 'Down', issuer: 'http://127.0.0.1:9', clientId: 'rp', clientSecret: 'x', isIdTokenMapping: false });
    expect(await refusalOf(startIntent(ctx, { provider: down, successUrl: SUCCESS, failureUrl: FAILURE }))).toMatchObject({
      kind: 'conflict', message: 'Down: the provider could not be reached',
    });
  });
});

describe('a second Gatehouse as the upstream', () => {
  let other: LoginServer;
  beforeAll(async () => {
    // its web application accepts this Gatehouse's callback
    const document = fixture().document as { orgs: Array<{ projects: Array<{ apps: Array<{ clientId: string; redirectUris?: string[] }> }> }> };
    const web = document.orgs[0]!.projects[0]!.apps.find((app) => app.clientId === 'shop-web')!;
    web.redirectUris = [...(web.redirectUris ?? []), CALLBACK];
    other = await startLoginServer({}, document);
  });
  afterAll(() => other?.stop());

  it('signs in through its login pages', async () => {
    const p = await provider({ kind: 'oidc', name: 'Other Gatehouse', issuer: other.server.config.externalUrl, clientId: 'shop-web', clientSecret: SECRETS.web, scopes: ['openid', 'profile', 'email'], isIdTokenMapping: false });
    const started = await startIntent(ctx, { provider: p, successUrl: SUCCESS, failureUrl: FAILURE });
    const browser = new Browser(other.base);
    const authorize = new URL(started.authUrl);
    const toLogin = await browser.get(`${authorize.pathname}${authorize.search}`);
    const requestId = /authRequestID=(\d+)/.exec(toLogin.location ?? '')![1]!;
    const signedIn = await signIn(browser, requestId, ALICE.loginName, ALICE.password);
    const done = await browser.get(signedIn.location ?? callbackOf(requestId));
    const back = new URL(done.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(CALLBACK);
    const success = redirectOf(await completeIntent(ctx, { state: back.searchParams.get('state')!, code: back.searchParams.get('code')!, iss: back.searchParams.get('iss')! }));
    const intent = await consumeIntent(ctx, started.intentId, success.searchParams.get('token')!);
    expect(intent).toMatchObject({ subject: IDS.alice, userName: ALICE.loginName, profile: { email: 'alice@acme.test', emailVerified: true } });
  });
});

describe('the prune', () => {
  it('deletes intents past their hour, with the tokens they held', async () => {
    const { started, parameters } = await signInAtUpstream();
    redirectOf(await completeIntent(ctx, parameters));
    expect((await rowOf(started.intentId)).sealed_result).not.toBeNull();
    await database.db.updateTable('idp_intents').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', started.intentId).execute();
    await pruneExpired(database.db, new Date(), { batch: 100, pauseMs: 0 });
    expect(await database.db.selectFrom('idp_intents').select('id').where('id', '=', started.intentId).executeTakeFirst()).toBeUndefined();
  });
});
