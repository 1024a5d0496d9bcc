/**
 * Self-registration's limits and its organization, replayed through the login pages over HTTP: registrations per client address
 * and per instance, the organization a registration lands in, and the mail a new account can have
 * sent to an address it names. Client addresses come from X-Forwarded-For, which the server trusts
 * from 127.0.0.1 here (GATEHOUSE_TRUSTED_PROXIES), so each case registers from addresses of its own.
 */
import { IDS, fixture, SECRETS } from '../support/fixtures.ts';
import { whileHashingQueueFull } from '../support/hashing.ts';
import { basic, postForm } from '../support/http.ts';
import { API_SCOPE } from '../support/management.ts';
import { Mailbox, nthMailTo, partOf } from '../mail/mailbox.ts';
import { authRequest, Browser, callbackOf, csrfIn, REDIRECT_URI, startLoginServer, stepOf, type LoginServer, type Reply } from './support.ts';

const BUDGET = 20;
const CLOSED_ORG = '100000000000000003';
const OTHER_REDIRECT = 'http://localhost:3000/other-callback';
const CLOSED_REDIRECT = 'http://localhost:3000/closed-callback';
const PASSWORD = 'Fresh-Start-42';

/** The shared fixture, plus an application in the other organization (which opens registration) and an organization that leaves it unset. */
function document(): Record<string, unknown> {
  const doc = fixture().document as { orgs: Array<Record<string, unknown>> };
  const other = doc.orgs[1] as { allowRegister?: boolean; projects: Array<{ apps: unknown[] }> };
  other.allowRegister = true;
  other.projects[0]!.apps.push(webApp('other-web', OTHER_REDIRECT));
  doc.orgs.push({ id: CLOSED_ORG, name: 'Closed', domain: 'closed.test', projects: [{ name: 'closed', apps: [webApp('closed-web', CLOSED_REDIRECT)] }] });
  return doc;
}

function webApp(clientId: string, redirectUri: string): Record<string, unknown> {
  return { name: clientId, clientId, clientSecret: `${clientId}-secret`, authMethod: 'client_secret_basic', redirectUris: [redirectUri], responseTypes: ['code'], grantTypes: ['authorization_code'] };
}

const mailbox = new Mailbox();
let ls: LoginServer;
beforeAll(async () => {
  await mailbox.start(0);
  ls = await startLoginServer(
    { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_REGISTRATIONS_PER_HOUR: String(BUDGET), GATEHOUSE_SMTP_URL: mailbox.url, GATEHOUSE_FAILED_AUTH_RATE_LIMIT: '1000' },
    document(),
  );
});
afterAll(async () => {
  await ls?.stop();
  await mailbox.stop();
});

let names = 0;
/** Opens the register page of a new request and posts the form from `address`; returns the answer and the request. */
async function register(address: string, options: { clientId?: string; redirectUri?: string; userName?: string; givenName?: string; familyName?: string; scopes?: string[] } = {}) {
  const b = new Browser(ls.base);
  const from = { 'x-forwarded-for': address };
  const request = await authRequest(ls.gh, b, {
    prompt: ['create'],
    clientId: options.clientId ?? 'shop-web',
    redirectUri: options.redirectUri ?? REDIRECT_URI,
    scopes: options.scopes ?? ['openid'],
  });
  const userName = options.userName ?? `newcomer-${++names}`;
  const page = await b.get(stepOf('register', request.id), from);
  const form = {
    authRequestID: request.id,
    csrfToken: page.status === 200 ? csrfIn(page.text) : csrfIn((await b.get(stepOf('login', request.id), from)).text),
    userName,
    email: `${userName}@example.test`,
    givenName: options.givenName ?? 'New',
    familyName: options.familyName ?? 'Comer',
    password: PASSWORD,
    passwordConfirmation: PASSWORD,
  };
  const reply = await b.post('/ui/login/register', form, from);
  return { b, request, page, reply, userName };
}

function userNamed(userName: string) {
  return ls.gh.db.selectFrom('users').select(['id', 'org_id']).where('user_name', '=', userName).executeTakeFirst();
}

function retryAfterOf(reply: Reply): number {
  return Number(reply.headers.get('retry-after'));
}

describe('registrations per client address', () => {
  // The attack: 30 registrations in a row from one address all succeeded, each an argon2 hash and a mail relay.
  it('creates 5 accounts an hour from one address; the sixth is 429 with Retry-After, before any hash, and creates nobody', async () => {
    for (let i = 0; i < 5; i++) {
      const { request, reply } = await register('198.51.100.7');
      expect(reply).toMatchObject({ status: 303, location: callbackOf(request.id) });
    }
    // With the hashing queue full, a registration that hashed would be answered 503.
    const sixth = await whileHashingQueueFull(() => register('198.51.100.7', { userName: 'sixth-one' }));
    expect(sixth.reply.status).toBe(429);
    expect(retryAfterOf(sixth.reply)).toBeGreaterThan(3000);
    expect(retryAfterOf(sixth.reply)).toBeLessThanOrEqual(3600);
    expect(sixth.reply.text).toContain('Too many accounts have been created recently. Please try again in 60 minutes.');
    expect(sixth.reply.text).not.toContain(PASSWORD); // the form comes back without the password
    expect(await userNamed('sixth-one')).toBeUndefined();

    // The count lives in the database, not in this process's memory, and another address is not affected.
    expect(await ls.gh.db.selectFrom('registrations').select('user_id').where('address', '=', '198.51.100.7').execute()).toHaveLength(5);
    const neighbour = await register('198.51.100.8');
    expect(neighbour.reply.status).toBe(303);
  });

  it('counts an IPv6 client per /64', async () => {
    for (let i = 1; i <= 5; i++) expect((await register(`2001:db8:7:7::${i}`)).reply.status).toBe(303);
    expect((await register('2001:db8:7:7:ffff::1')).reply.status).toBe(429);
  });
});

describe('the organization of the application', () => {
  // The attack: another organization's application registered users into the default organization.
  it('registers users of another organization’s application into that organization', async () => {
    const { request, b, reply, userName } = await register('192.0.2.10', { clientId: 'other-web', redirectUri: OTHER_REDIRECT });
    expect(reply).toMatchObject({ status: 303, location: callbackOf(request.id) });
    expect(await userNamed(userName)).toMatchObject({ org_id: IDS.otherOrg });
    const added = await ls.gh.db.selectFrom('events').select('resource_owner').where('event_type', '=', 'user.human.added').where('aggregate_id', '=', (await userNamed(userName))!.id).executeTakeFirstOrThrow();
    expect(added.resource_owner).toBe(IDS.otherOrg);
    // and the login name page of that application offers registration
    const next = await authRequest(ls.gh, b, { clientId: 'other-web', redirectUri: OTHER_REDIRECT });
    expect((await b.get(stepOf('login', next.id))).text).toContain(`<a href="${stepOf('register', next.id)}">Create an account</a>`);
  });

  it('offers nothing, and creates nobody, for an application whose organization leaves registration unset', async () => {
    const { request, b, page, reply, userName } = await register('192.0.2.11', { clientId: 'closed-web', redirectUri: CLOSED_REDIRECT });
    expect(page.status).toBe(403);
    expect(page.text).toContain('Creating an account is not available here. Sign in with an existing account.');
    expect(reply.status).toBe(403);
    expect(await userNamed(userName)).toBeUndefined();
    expect((await b.get(stepOf('login', request.id))).text).not.toContain('Create an account');
  });

  it('keeps registering users of the default organization’s applications into it', async () => {
    const { reply, userName } = await register('192.0.2.12');
    expect(reply.status).toBe(303);
    expect(await userNamed(userName)).toMatchObject({ org_id: IDS.org });
  });
});

describe('mail to the address a new account names', () => {
  // The attack: the greeting carried the registrant's given and family name to any address, in Gatehouse's name.
  it('carries no name the registrant chose', async () => {
    const lure = 'URGENT your mailbox will be deleted today - call +1 555 0100';
    const { b, request, reply, userName } = await register('192.0.2.20', { givenName: lure, familyName: '.', scopes: API_SCOPE.split(' ') });
    expect(reply.status).toBe(303);
    const callback = await b.get(callbackOf(request.id));
    const code = new URL(callback.headers.get('location')!).searchParams.get('code')!;
    const tokens = await postForm(`${ls.server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic('shop-web', SECRETS.web) });
    expect(tokens.status).toBe(200);
    const user = (await userNamed(userName))!;

    const victim = 'victim@victim-corp.test';
    const sent = await fetch(`${ls.server.url}/v2/users/${user.id}/email`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(tokens.json['access_token'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: victim, sendCode: {} }),
    });
    expect(sent.status).toBe(200);
    ls.server.running.mail.kick();
    const mail = await nthMailTo(mailbox, victim, 1);
    const text = partOf(mail.raw, 'text/plain')!;
    const html = partOf(mail.raw, 'text/html')!;
    expect(text.split(/\r?\n/)[0]).toBe('Hello,');
    for (const body of [text, html]) {
      expect(body).not.toContain('URGENT');
      expect(body).not.toContain('555 0100');
    }
    expect(text).toMatch(/Your verification code: [A-Z0-9]{6}/);
  });
});

describe('registrations of the whole instance', () => {
  it(`stops at GATEHOUSE_REGISTRATIONS_PER_HOUR (${BUDGET} here), whatever the address`, async () => {
    const before = (await ls.gh.db.selectFrom('registrations').select('user_id').execute()).length;
    expect(before).toBeLessThan(BUDGET);
    for (let i = before; i < BUDGET; i++) expect((await register(`203.0.113.${i}`)).reply.status).toBe(303);
    const over = await register('203.0.113.200', { userName: 'over-budget' });
    expect(over.reply.status).toBe(429);
    expect(retryAfterOf(over.reply)).toBeGreaterThan(3000);
    expect(await userNamed('over-budget')).toBeUndefined();
  });
});
