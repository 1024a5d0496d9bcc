/**
 * The self-service page /ui/login/passkeys (docs/passkeys.md#the-passkeys-page): the passkeys of the
 * browser's signed-in user.
 *
 * - No signed-in user (or not the one `?userID=` names): a sign-in first. The page opens a request of its own (no client; its
 *   redirect URI is this page) and sends the browser to the login name step; once signed in, the
 *   browser comes back here (see startSignIn).
 * - Several signed-in users: the page asks which one (`?userID=` names it).
 * - Listing needs a session that used every factor the user has (a password-only session from before
 *   the user's authenticator app counts as none, as at single sign-on); adding and removing need that
 *   sign-in to be within the last 10 minutes (domain/fresh-sign-in.ts), else the page offers
 *   "Sign in again" (a sign-in with prompt=login for that user).
 * - Adding: the script asks POST /ui/login/passkeys/options for the options (a pending
 *   registration), lets the browser create the credential and posts it here with its name.
 * - Removing asks first, on a page of its own (`?remove=`, no JavaScript needed). Either change
 *   ends in a redirect to the page with a notice (`?done=added|removed`, fixed words only).
 * - "Done" leads back to `returnTo`, the page the user came from, when it is on this server or on
 *   the origin of a redirect URI of an application of the user's organization (as code mail links,
 *   docs/security.md 10.2); else to the `defaultRedirectUri` of the login policy of the user's
 *   organization, and without one to a page saying all is done. "Sign out" ends the browser's
 *   sessions through the logout form (steps/logout.ts).
 * - A registration link (CreatePasskeyRegistrationLink: `?userID=&codeID=&code=`) needs no sign-in:
 *   the code stands in for it (passkey-codes.ts), as in ZITADEL. The page shows no name or address
 *   before the code has been accepted, and every refusal (unknown user, wrong, used or lapsed code)
 *   is the same. The code is used when the options are handed out; the registration it starts may be
 *   finished by this browser only (its cookie is the code's holder), within 5 minutes.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../../context.ts';
import { createAuthRequest } from '../../domain/sign-in/auth-requests.ts';
import { relyingParty } from '../../domain/passkeys/passkey-party.ts';
import { finishPasskeyRegistration, startedWithCodeBy, startPasskeyRegistration } from '../../domain/passkeys/passkey-registration.ts';
import { listPasskeys, loadPasskeyUser, removePasskey, type PasskeyInfo, type PasskeyUser } from '../../domain/passkeys/passkeys.ts';
import { recentSignIn } from '../../domain/credentials/fresh-sign-in.ts';
import { sessionMeetsFactors } from '../../domain/credentials/otp.ts';
import { activeSessions, type UserSession } from '../../domain/sign-in/sessions.ts';
import { browserHashOf, browserOf } from '../../http/browser.ts';
import { showErrorPage } from '../../http/error-page.ts';
import { parseParams, readForm } from '../../http/form.ts';
import { html, type Html } from '../../http/html.ts';
import { negotiateLocale } from '../../http/locale.ts';
import { LOGIN_UI_PATH, LOGOUT_CONFIRM_PATH } from '../../http/paths.ts';
import { httpOrigin } from '../../domain/kernel/origin.ts';
import { listOrgRedirectUris } from '../../store/apps.ts';
import { page } from '../../http/page.ts';
import { securityHeaders, seeOther } from '../../http/respond.ts';
import { CSRF_FIELD, csrfTokenFor, csrfValid, refuseForgedForm } from '../csrf.ts';
import { clientAddress, REQUEST_PARAM } from '../flow.ts';
import { field, link } from '../layout.ts';
import { messagesFor, type Messages } from '../messages.ts';
import { passkeyScript, sendScriptedPage } from '../passkey-page.ts';

export const PASSKEYS_PAGE_PATH = `${LOGIN_UI_PATH}/passkeys`;
const DONE_PATH = `${PASSKEYS_PAGE_PATH}/done`;
/** Longest `returnTo` looked at. */
const MAX_RETURN_TO = 2048;
const OPTIONS_PATH = `${PASSKEYS_PAGE_PATH}/options`;
/** As the API's passkeyName (1–200 characters). */
const MAX_NAME = 200;
/** Longest code id or code looked at (as the API's limit on these fields). */
const MAX_CODE = 200;
const ID = /^\d{1,24}$/;

/** A registration link's user and code, as the link (or the page's form) carries them. */
interface LinkCode {
  userId: string;
  id: string;
  code: string;
}

function linkCodeOf(fields: ReadonlyMap<string, string>): LinkCode | undefined {
  const userId = fields.get('userID') ?? '';
  const id = fields.get('codeID') ?? '';
  const code = fields.get('code') ?? '';
  if (!ID.test(userId) || id === '' || code === '' || id.length > MAX_CODE || code.length > MAX_CODE) return undefined;
  return { userId, id, code };
}

interface Account {
  session: UserSession;
  user: PasskeyUser;
}

interface Context {
  m: Messages;
  locales: string[];
  accounts: Account[];
  /** Where the user came from, as the page was asked (checked against the account's organization before use). */
  returnTo: string | undefined;
}

function queryOf(req: Request): Map<string, string> {
  const q = req.originalUrl.indexOf('?');
  return parseParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
}

/** The browser's signed-in, active human users, most recently used first. */
async function accountsOf(gh: Gatehouse, req: Request): Promise<Account[]> {
  const browser = browserHashOf(gh, req);
  if (browser === undefined) return [];
  const accounts: Account[] = [];
  for (const session of await activeSessions(gh.db, gh.instanceId, browser)) {
    // a session from before the user's authenticator app answers for nobody (as at single sign-on)
    if (!(await sessionMeetsFactors(gh.db, session))) continue;
    const user = await loadPasskeyUser(gh.db, gh.instanceId, session.userId);
    if (user !== undefined && user.kind === 'human' && user.state === 'active') accounts.push({ session, user });
  }
  return accounts;
}

function messagesOf(req: Request, locales: string[]): Messages {
  return messagesFor(negotiateLocale(locales, req.headers['accept-language']));
}

/** The page's messages and the browser's accounts (a registration link's forms need no accounts). */
async function contextOf(gh: Gatehouse, req: Request, locales: string[], returnTo: string | undefined): Promise<Context> {
  return { m: messagesOf(req, locales), locales, accounts: await accountsOf(gh, req), returnTo: returnToOf(returnTo) };
}

/** A `returnTo` worth looking at: an absolute http(s) URL of sensible length. */
function returnToOf(value: string | undefined): string | undefined {
  return value !== undefined && value.length <= MAX_RETURN_TO && httpOrigin(value) !== undefined ? value : undefined;
}

/**
 * Where "Done" leads: `returnTo` when it is on this server or on the origin of a redirect URI of an
 * application of the user's organization (no open redirect); else where the login policy of the
 * user's organization sends a flow no application started (`defaultRedirectUri`, checked to be an
 * absolute http(s) URL when it was set); else the page that says all is done.
 */
async function doneTarget(gh: Gatehouse, ctx: Context, account: Account): Promise<string> {
  const { defaultRedirectUri } = (await gh.directory.orgSettings(gh.instanceId, account.user.orgId)).login;
  const fallback = defaultRedirectUri !== '' ? defaultRedirectUri : `${DONE_PATH}${ctx.locales.length > 0 ? `?ui_locales=${encodeURIComponent(ctx.locales.join(' '))}` : ''}`;
  if (ctx.returnTo === undefined) return fallback;
  const origin = httpOrigin(ctx.returnTo);
  if (origin === httpOrigin(gh.config.externalUrl)) return ctx.returnTo;
  const registered = (await listOrgRedirectUris(gh.db, gh.instanceId, account.user.orgId)).flat().map(httpOrigin);
  return registered.includes(origin) ? ctx.returnTo : fallback;
}

/** Adding or removing a passkey here needs a recent sign-in (the page lists only sessions that used every factor). */
function isFresh(session: UserSession, now = Date.now()): boolean {
  return recentSignIn(session, now);
}

/** The page's address: for a user, with where it came from, and a notice or a removal to confirm. */
function pagePath(userId?: string, extra: { returnTo?: string | undefined; done?: 'added' | 'removed'; remove?: string } = {}): string {
  const query = new URLSearchParams();
  if (userId !== undefined) query.set('userID', userId);
  if (extra.returnTo !== undefined) query.set('returnTo', extra.returnTo);
  if (extra.done !== undefined) query.set('done', extra.done);
  if (extra.remove !== undefined) query.set('remove', extra.remove);
  const search = query.toString();
  return search === '' ? PASSKEYS_PAGE_PATH : `${PASSKEYS_PAGE_PATH}?${search}`;
}

/**
 * A sign-in that comes back to this page: a request of the login UI with no client, whose redirect
 * URI is this page. The login steps finish it through /authorize's callback, which sends a request
 * without a client back to its page (oauth/authorize-finish.ts) once the browser's session exists.
 */
async function startSignIn(gh: Gatehouse, req: Request, res: Response, ctx: Context, target: { returnTo?: string | undefined; again?: PasskeyUser } = {}): Promise<void> {
  const { again } = target;
  const request = await createAuthRequest(gh.db, {
    instanceId: gh.instanceId,
    browser: browserOf(gh, req, res),
    clientId: '',
    redirectUri: `${gh.config.externalUrl}${pagePath(again?.id ?? target.returnTo, { returnTo: ctx.returnTo })}`,
    responseType: 'code',
    responseMode: 'query',
    scopes: ['openid'],
    state: undefined,
    nonce: undefined,
    codeChallenge: undefined,
    prompt: again === undefined ? [] : ['login'],
    maxAge: undefined,
    loginHint: again?.loginName,
    hintUserId: undefined,
    uiLocales: ctx.locales,
  });
  seeOther(res, `${gh.config.externalUrl}${LOGIN_UI_PATH}/login?${REQUEST_PARAM}=${encodeURIComponent(request.id)}`);
}

function dateText(m: Messages, at: Date): string {
  return new Intl.DateTimeFormat(m.lang, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(at) + ' UTC';
}

function hidden(csrf: string, userId: string, returnTo?: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
<input type="hidden" name="userID" value="${userId}">${returnTo === undefined ? '' : html`
<input type="hidden" name="returnTo" value="${returnTo}">`}`;
}

function passkeyItem(m: Messages, account: Account, passkey: PasskeyInfo, fresh: boolean, returnTo: string | undefined): Html {
  const nameId = `passkey-${passkey.id}`;
  return html`<li class="identity">
<strong id="${nameId}">${passkey.name}</strong>
<dl class="facts">
<dt>${m.passkeyCreated}</dt><dd>${dateText(m, passkey.createdAt)}</dd>
<dt>${m.passkeyLastUsed}</dt><dd>${passkey.lastUsedAt === null ? m.passkeyNeverUsed : dateText(m, passkey.lastUsedAt)}</dd>
</dl>
${fresh ? html`<a href="${pagePath(account.user.id, { returnTo, remove: passkey.id })}" aria-describedby="${nameId}">${m.passkeyRemove}</a>` : ''}
</li>`;
}

/** A registration link's own address: its form posts back to it, so a refused post can be reloaded. */
function linkPath(link: LinkCode): string {
  return `${PASSKEYS_PAGE_PATH}?${new URLSearchParams({ userID: link.userId, codeID: link.id, code: link.code }).toString()}`;
}

/**
 * The form that adds a passkey (hidden until the script finds WebAuthn): for the signed-in user, or
 * with a registration link's code, whose form keeps its options for another try (data-reuse).
 */
function addForm(m: Messages, csrf: string, userId: string, link?: LinkCode, returnTo?: string): Html {
  const code = link === undefined
    ? html`<input type="hidden" name="action" value="add">`
    : html`<input type="hidden" name="codeID" value="${link.id}">
<input type="hidden" name="code" value="${link.code}">
<input type="hidden" name="action" value="add-with-code">`;
  return html`<form method="post" action="${link === undefined ? pagePath(userId, { returnTo }) : linkPath(link)}" class="passkey-add" data-options="${OPTIONS_PATH}" data-failed="${link === undefined ? m.passkeyAddFailed : m.passkeyLinkFailed}"${link === undefined ? '' : html` data-reuse`} hidden>
${hidden(csrf, userId, returnTo)}
${code}
<input type="hidden" name="passkeyId" value="">
<input type="hidden" name="credential" value="">
${field({ name: 'name', label: m.passkeyName, autocomplete: 'off', hint: m.passkeyNameHint, maxLength: MAX_NAME })}
<button type="button" class="primary">${m.passkeyAdd}</button>
</form>
${passkeyScript()}`;
}

/** "Done" and "Sign out": the ways off the page. */
async function exits(gh: Gatehouse, ctx: Context, account: Account, csrf: string): Promise<Html> {
  const { m } = ctx;
  return html`<div class="actions">
<a href="${await doneTarget(gh, ctx, account)}">${m.passkeysDone}</a>
<form method="post" action="${LOGOUT_CONFIRM_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
${ctx.locales.length > 0 ? html`<input type="hidden" name="ui_locales" value="${ctx.locales.join(' ')}">` : ''}
<button type="submit" class="secondary">${m.logoutButton}</button>
</form>
</div>`;
}

const NOTICES = { added: 'passkeyAddedNotice', removed: 'passkeyRemovedNotice' } as const;

async function renderAccount(gh: Gatehouse, req: Request, res: Response, ctx: Context, account: Account, status: number, alert?: string, done?: string): Promise<void> {
  const { m } = ctx;
  const csrf = csrfTokenFor(gh, req, res);
  const fresh = isFresh(account.session);
  const passkeys = (await listPasskeys(gh.db, account.user.id)).filter((p) => p.state === 'ready');
  const body = html`<p class="identity">${m.passkeysSignedInAs} <strong>${account.user.loginName}</strong></p>
<p>${m.passkeysIntro}</p>
${passkeys.length === 0 ? html`<p>${m.passkeysNone}</p>` : html`<ul class="accounts">${passkeys.map((p) => passkeyItem(m, account, p, fresh, ctx.returnTo))}</ul>`}
${
  fresh
    ? addForm(m, csrf, account.user.id, undefined, ctx.returnTo)
    : html`<p>${m.passkeysReauth}</p>
<form method="post" action="${pagePath(account.user.id, { returnTo: ctx.returnTo })}">
${hidden(csrf, account.user.id, ctx.returnTo)}
<input type="hidden" name="action" value="signin">
<button type="submit" class="primary">${m.signInAgain}</button>
</form>`
}
${await exits(gh, ctx, account, csrf)}
${ctx.accounts.length > 1 ? html`<nav class="links">${link(pagePath(undefined, { returnTo: ctx.returnTo }), m.passkeysOtherAccount)}</nav>` : ''}`;
  const notice = done === 'added' || done === 'removed' ? m[NOTICES[done]] : undefined;
  sendScriptedPage(res, status, page({ m, title: m.passkeysTitle, notice, alert, body }));
}

/** Asks before a removal (no JavaScript needed): the passkey's name, "Remove" and "Cancel". */
async function renderRemoval(gh: Gatehouse, req: Request, res: Response, ctx: Context, account: Account, passkeyId: string): Promise<void> {
  const { m } = ctx;
  const passkey = (await listPasskeys(gh.db, account.user.id)).find((p) => p.id === passkeyId && p.state === 'ready');
  if (passkey === undefined || !isFresh(account.session)) return seeOther(res, `${gh.config.externalUrl}${pagePath(account.user.id, { returnTo: ctx.returnTo })}`);
  const csrf = csrfTokenFor(gh, req, res);
  const body = html`<p class="identity">${m.passkeysSignedInAs} <strong>${account.user.loginName}</strong></p>
<p>${m.passkeyRemoveText(passkey.name)}</p>
<div class="actions">
<form method="post" action="${pagePath(account.user.id, { returnTo: ctx.returnTo })}">
${hidden(csrf, account.user.id, ctx.returnTo)}
<input type="hidden" name="action" value="remove">
<input type="hidden" name="passkeyId" value="${passkey.id}">
<button type="submit" class="primary">${m.passkeyRemoveConfirm}</button>
</form>
<a href="${pagePath(account.user.id, { returnTo: ctx.returnTo })}">${m.logoutCancel}</a>
</div>`;
  sendScriptedPage(res, 200, page({ m, title: m.passkeyRemoveTitle, body }));
}

/** Where "Done" leads when the page does not know where the user came from. */
export function passkeysDonePage(req: Request, res: Response): void {
  const m = messagesOf(req, (queryOf(req).get('ui_locales') ?? '').split(' ').filter(Boolean).slice(0, 10));
  sendScriptedPage(res, 200, page({ m, title: m.passkeysDoneTitle, body: html`<p>${m.passkeysDoneText}</p>` }));
}

/** The page of a registration link: a name and the button, nothing about the user yet. */
function renderLinkPage(gh: Gatehouse, req: Request, res: Response, m: Messages, link: LinkCode, status: number, alert?: string): void {
  const csrf = csrfTokenFor(gh, req, res);
  const body = html`<p>${m.passkeyLinkIntro}</p>
${addForm(m, csrf, link.userId, link)}`;
  sendScriptedPage(res, status, page({ m, title: m.passkeysTitle, alert, body }));
}

/** Once the code has been accepted the page may say whose account got the passkey. */
function renderLinkDone(res: Response, m: Messages, loginName: string): void {
  const body = html`<p class="identity">${m.passkeyLinkAccount} <strong>${loginName}</strong></p>
<p>${m.passkeyLinkDone}</p>`;
  sendScriptedPage(res, 200, page({ m, title: m.passkeysTitle, body }));
}

function renderChoice(res: Response, ctx: Context): void {
  const { m } = ctx;
  const items = ctx.accounts.map(
    ({ user }) => html`<li><a class="account" href="${pagePath(user.id, { returnTo: ctx.returnTo })}"><span class="who"><span class="name">${user.displayName}</span><span class="login">${user.loginName}</span></span></a></li>`,
  );
  const body = html`<p>${m.passkeysChooseAccount}</p>
<ul class="accounts">${items}</ul>`;
  sendScriptedPage(res, 200, page({ m, title: m.passkeysTitle, body }));
}

function disabled(res: Response, m: Messages): void {
  showErrorPage(res, m, { status: 404, error: 'not_found', description: 'passkeys are disabled' });
}

function trimmedName(form: ReadonlyMap<string, string>): string | undefined {
  const name = (form.get('name') ?? '').trim();
  return name === '' || [...name].length > MAX_NAME ? undefined : name;
}

function parsed(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function passkeysPage(gh: Gatehouse) {
  /** The form, after the CSRF check, and the page's messages; undefined when an answer has been sent. */
  async function checkedForm(req: Request, res: Response): Promise<{ m: Messages; form: ReadonlyMap<string, string> } | undefined> {
    const form = await readForm(req, gh.config.maxBodyBytes);
    const m = messagesOf(req, []);
    if (!relyingParty(gh.config).enabled) return void disabled(res, m);
    if (!csrfValid(gh, req, form)) return void refuseForgedForm(res, m);
    return { m, form };
  }

  /** The browser's accounts and the form's signed-in one among them; undefined when an answer has been sent. */
  async function accountOf(req: Request, res: Response, form: ReadonlyMap<string, string>): Promise<{ ctx: Context; account: Account } | undefined> {
    const ctx = await contextOf(gh, req, [], form.get('returnTo'));
    const account = ctx.accounts.find((a) => a.user.id === form.get('userID'));
    if (account === undefined) return void seeOther(res, `${gh.config.externalUrl}${pagePath(undefined, { returnTo: ctx.returnTo })}`);
    return { ctx, account };
  }

  /** The user a registration link names, when it may hold passkeys; one answer for every miss. */
  async function linkUser(link: LinkCode): Promise<PasskeyUser | undefined> {
    const user = await loadPasskeyUser(gh.db, gh.instanceId, link.userId);
    return user?.kind === 'human' ? user : undefined;
  }

  /**
   * Who holds a code used on this page: the browser (its cookie, checked with the form's CSRF token).
   * Undefined without a cookie, which the CSRF check has already refused: no shared holder.
   */
  function codeHolder(req: Request): string | undefined {
    const browser = browserHashOf(gh, req);
    return browser === undefined ? undefined : `browser:${browser}`;
  }

  /** A registration link's form: the pending registration this browser started with the code, finished. */
  async function submitWithCode(req: Request, res: Response, m: Messages, form: ReadonlyMap<string, string>): Promise<void> {
    const link = linkCodeOf(form);
    if (link === undefined) return showErrorPage(res, m, { status: 400, error: 'invalid_request', description: 'the link is incomplete' });
    const name = trimmedName(form);
    const credential = parsed(form.get('credential'));
    const passkeyId = form.get('passkeyId') ?? '';
    const user = await linkUser(link);
    const holder = codeHolder(req);
    const ours = user !== undefined && holder !== undefined && ID.test(passkeyId) && (await startedWithCodeBy(gh.db, user.id, passkeyId, holder));
    if (!ours || name === undefined || credential === undefined) return renderLinkPage(gh, req, res, m, link, 400, m.passkeyLinkFailed);
    const finished = await finishPasskeyRegistration(gh, user, { passkeyId, credential, name, creator: user.id });
    if (finished.kind !== 'verified') return renderLinkPage(gh, req, res, m, link, 400, m.passkeyLinkFailed);
    renderLinkDone(res, m, user.loginName);
  }

  return {
    async show(req: Request, res: Response): Promise<void> {
      const query = queryOf(req);
      const locales = (query.get('ui_locales') ?? '').split(' ').filter(Boolean).slice(0, 10);
      if (!relyingParty(gh.config).enabled) return disabled(res, messagesOf(req, locales));
      const link = linkCodeOf(query);
      if (link !== undefined) return renderLinkPage(gh, req, res, messagesOf(req, locales), link, 200);
      const ctx = await contextOf(gh, req, locales, query.get('returnTo'));
      const wanted = query.get('userID');
      const chosen = wanted === undefined ? (ctx.accounts.length === 1 ? ctx.accounts[0] : undefined) : ctx.accounts.find((a) => a.user.id === wanted);
      const removal = query.get('remove');
      if (chosen !== undefined && removal !== undefined) return renderRemoval(gh, req, res, ctx, chosen, removal);
      if (chosen !== undefined) return renderAccount(gh, req, res, ctx, chosen, 200, undefined, query.get('done'));
      if (ctx.accounts.length > 0 && wanted === undefined) return renderChoice(res, ctx);
      // Nobody signed in (or not the user the link names): sign in first. The link's user id is not
      // turned into a login hint: that would tell anyone the login name of any user id.
      return startSignIn(gh, req, res, ctx, { returnTo: wanted !== undefined && ID.test(wanted) ? wanted : undefined });
    },

    async submit(req: Request, res: Response): Promise<void> {
      const got = await checkedForm(req, res);
      if (got === undefined) return;
      const { m, form } = got;
      const action = form.get('action');
      if (action === 'add-with-code') return submitWithCode(req, res, m, form);
      const signedIn = await accountOf(req, res, form);
      if (signedIn === undefined) return;
      const { ctx, account } = signedIn;
      // A signed-in user of this browser signs in again: its login name may be prefilled.
      if (action === 'signin') return startSignIn(gh, req, res, ctx, { again: account.user });
      if (!isFresh(account.session)) return renderAccount(gh, req, res, ctx, account, 403, m.passkeysReauth);
      const back = (done: 'added' | 'removed') => seeOther(res, `${gh.config.externalUrl}${pagePath(account.user.id, { returnTo: ctx.returnTo, done })}`);
      const passkeyId = form.get('passkeyId') ?? '';
      if (action === 'remove') {
        const removed = await removePasskey(gh, account.user, passkeyId, { creator: account.user.id, byAdministrator: false });
        if (removed.kind === 'last_sign_in_method') return renderAccount(gh, req, res, ctx, account, 400, m.passkeyLastMethod);
        return back('removed'); // removed, or gone already
      }
      if (action === 'add') {
        const name = trimmedName(form);
        const credential = parsed(form.get('credential'));
        if (name === undefined || credential === undefined || !ID.test(passkeyId)) return renderAccount(gh, req, res, ctx, account, 400, m.passkeyAddFailed);
        const finished = await finishPasskeyRegistration(gh, account.user, { passkeyId, credential, name, creator: account.user.id });
        if (finished.kind !== 'verified') return renderAccount(gh, req, res, ctx, account, 400, m.passkeyAddFailed);
        return back('added');
      }
      return renderAccount(gh, req, res, ctx, account, 400);
    },

    /**
     * The options of a new registration for the page's script: JSON, never cached. With a link's
     * code, the code is used here (one registration per code) and this browser becomes its holder.
     */
    async options(req: Request, res: Response): Promise<void> {
      const got = await checkedForm(req, res);
      if (got === undefined) return;
      const { form } = got;
      if (form.get('action') === 'add-with-code') {
        securityHeaders(res);
        // Codes are guessed like passwords: a try is taken from the address first (docs/security.md 10.11).
        const address = clientAddress(gh, req);
        const wait = gh.throttle.take(address);
        if (wait > 0) return void res.status(429).set('Retry-After', String(wait)).json({ error: 'refused' });
        const link = linkCodeOf(form);
        const user = link === undefined ? undefined : await linkUser(link);
        const holder = codeHolder(req);
        if (link === undefined || user === undefined || holder === undefined || trimmedName(form) === undefined) return void res.status(400).json({ error: 'refused' });
        const started = await startPasskeyRegistration(gh, user, { creator: user.id, code: { id: link.id, code: link.code, holder } });
        if (started.kind !== 'started') return void res.status(400).json({ error: 'refused' });
        gh.throttle.succeeded(address);
        return void res.status(200).json({ passkeyId: started.registration.passkeyId, options: started.registration.options });
      }
      const signedIn = await accountOf(req, res, form);
      if (signedIn === undefined) return;
      const { account } = signedIn;
      securityHeaders(res);
      if (!isFresh(account.session)) return void res.status(403).json({ error: 'sign in again' });
      if (trimmedName(form) === undefined) return void res.status(400).json({ error: 'name' });
      const started = await startPasskeyRegistration(gh, account.user, { creator: account.user.id });
      if (started.kind !== 'started') return void res.status(400).json({ error: 'refused' });
      res.status(200).json({ passkeyId: started.registration.passkeyId, options: started.registration.options });
    },
  };
}
