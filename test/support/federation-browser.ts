/**
 * What the browser suites of external sign-in share: the application's callback page (a small
 * server that only says "signed in"), openid-client as the relying party, and a person in Chromium
 * who starts at the application, signs in at node-oidc-provider's own login and consent pages
 * (upstreams.ts) and comes back. The suites keep their servers and accounts; this holds the moves.
 */
import http from 'node:http';
import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestServer } from './gatehouse.ts';
import { rest } from './management.ts';
import { freePort } from './ports.ts';
import { UPSTREAM_CLIENTS } from './upstreams.ts';

export interface ClientCredentials {
  clientId: string;
  secret: string;
}

/** One authorization request of the relying party, for the code it comes back with. */
export interface Flow {
  state: string;
  nonce: string;
  config: client.Configuration;
}

/** The application's callback page on 127.0.0.1; `base` is its origin. */
export async function startCallbackPage(): Promise<{ base: string; stop(): Promise<void> }> {
  const port = await freePort();
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>'));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Where the person goes: Gatehouse at `origin`, the application's callback at `rpBase`, the upstream at `upstreamIssuer`. */
export interface FederationSite {
  browser: Browser;
  origin: string;
  rpBase: string;
  upstreamIssuer: string;
  app: ClientCredentials;
}

/** The person's moves in the browser, at `site`. */
export function federationPages(site: () => FederationSite) {
  async function relyingParty(creds = site().app): Promise<client.Configuration> {
    return client.discovery(new URL(site().origin), creds.clientId, undefined, client.ClientSecretBasic(creds.secret), { execute: [client.allowInsecureRequests] });
  }

  return {
    relyingParty,

    /** A browser context of its own (no cookies), in `locale`. */
    async freshPage(locale = 'en-US'): Promise<{ context: BrowserContext; page: Page }> {
      const context = await site().browser.newContext({ locale, viewport: { width: 480, height: 760 } });
      return { context, page: await context.newPage() };
    },

    /**
     * Opens the application's authorization request; waits for the login name page (`waitFor`, or
     * `''` for nothing). `prompt` none asks for no page at all.
     */
    async authorize(page: Page, options: { creds?: ClientCredentials; scope?: string; waitFor?: string; prompt?: string } = {}): Promise<Flow> {
      const config = await relyingParty(options.creds);
      const state = client.randomState();
      const nonce = client.randomNonce();
      const parameters: Record<string, string> = { redirect_uri: `${site().rpBase}/callback`, scope: options.scope ?? 'openid', state, nonce };
      if (options.prompt !== undefined) parameters['prompt'] = options.prompt;
      await page.goto(client.buildAuthorizationUrl(config, parameters).href);
      if (options.waitFor !== '') await page.waitForSelector(options.waitFor ?? 'input[name="loginName"]');
      return { state, nonce, config };
    },

    /** Signs in as `account` at the upstream's own pages, until it sends the browser back to Gatehouse. */
    async atUpstream(page: Page, account = 'ada'): Promise<void> {
      const issuer = site().upstreamIssuer;
      await page.waitForURL(`${issuer}/**`);
      await page.fill('input[name="login"]', account);
      await page.fill('input[name="password"]', 'any');
      await page.click('button[type="submit"]');
      for (let hop = 0; hop < 3 && page.url().startsWith(issuer); hop++) {
        const consent = page.locator('button[autofocus]');
        if ((await consent.count()) > 0 && page.url().startsWith(issuer)) await consent.click().catch(() => undefined);
        await page.waitForURL((url) => !url.href.startsWith(issuer), { timeout: 5000 }).catch(() => undefined);
      }
    },

    /** Back at the application: the ID token's claims for the code it got. */
    async tokensAt(page: Page, flow: Flow) {
      await page.waitForURL(`${site().rpBase}/callback**`);
      const tokens = await client.authorizationCodeGrant(flow.config, new URL(page.url()), { expectedState: flow.state, expectedNonce: flow.nonce });
      return tokens.claims()!;
    },
  };
}

/**
 * The organization's own login policy, allowing external sign-in, and one OpenID provider at the
 * upstream `issuer` per entry of `options` (its name and provider options), each listed in that
 * policy: the providers' ids by name. Configured by the organization's owner over REST; Gatehouse
 * is the upstream's client `upstreamClient` (by default node-oidc-provider's, upstreams.ts).
 */
export async function offerUpstreamProviders(
  server: TestServer,
  orgAdmin: string,
  issuer: string,
  options: Record<string, Record<string, unknown>>,
  upstreamClient: { clientId: string; clientSecret: string } = UPSTREAM_CLIENTS.oidc,
): Promise<Record<string, string>> {
  const must = async (call: Promise<{ status: number; json: Record<string, unknown> }>, what: string) => {
    const answer = await call;
    if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json;
  };
  await must(rest(server, 'POST', '/management/v1/policies/login', orgAdmin, { allowUsernamePassword: true, allowExternalIdp: true, passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' }), 'the login policy');
  const ids: Record<string, string> = {};
  for (const [name, providerOptions] of Object.entries(options)) {
    const added = await must(
      rest(server, 'POST', '/management/v1/idps/generic_oidc', orgAdmin, {
        name, issuer, clientId: upstreamClient.clientId, clientSecret: upstreamClient.clientSecret, scopes: ['openid', 'profile', 'email'], providerOptions, usePkce: true,
      }),
      `the provider ${name}`,
    );
    ids[name] = String(added['id']);
    await must(rest(server, 'POST', '/management/v1/policies/login/idps', orgAdmin, { idpId: ids[name] }), `listing ${name}`);
  }
  return ids;
}
