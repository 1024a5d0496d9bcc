/**
 * Refresh families and the authenticator app (docs/security.md 10.4): once a user's OTP factor
 * is ready, refresh tokens from sign-ins without it (amr without otp) stop refreshing, as browser
 * sessions already stop answering for the user. openid-client is the relying party; the factor is
 * set up through the real API.
 */
import * as client from 'openid-client';
import { fixture, IDS, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { request, type Reply } from '../support/http.ts';
import { signedInCode } from '../support/sign-in.ts';
import { codeFor } from '../support/totp.ts';

const REDIRECT_URI = 'http://localhost:3000/callback';
const API_SCOPE = 'urn:gatehouse:iam:org:project:id:gatehouse:aud';
const OTP_PATH = '/auth/v1/users/me/auth_factors/otp';

let server: TestServer;
let config: client.Configuration;

beforeAll(async () => {
  const doc = structuredClone(fixture().document) as { orgs: Array<{ users?: unknown[] }> };
  doc.orgs[0]!.users!.push({ id: IDS.bob, userName: 'bob', password: 'Correct-Horse-9', email: 'bob@acme.test', emailVerified: true });
  server = await startTestServer(doc);
  config = await client.discovery(new URL(server.url), 'shop-web', undefined, client.ClientSecretBasic(SECRETS.web), { execute: [client.allowInsecureRequests] });
});
afterAll(() => server.stop());

/** A sign-in of bob to shop-web with offline_access; the tokens as openid-client got them. */
async function signIn(amr: string[]) {
  const issued = await signedInCode(server, { clientId: 'shop-web', redirectUri: REDIRECT_URI, scopes: ['openid', 'offline_access', API_SCOPE], userId: IDS.bob, amr });
  const tokens = await client.authorizationCodeGrant(config, issued.callback, { expectedState: issued.state, expectedNonce: issued.nonce });
  expect(tokens.refresh_token).toEqual(expect.any(String));
  return tokens;
}

function api(method: string, path: string, token: string, body: unknown): Promise<Reply> {
  return request(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function refreshError(refreshToken: string): Promise<unknown> {
  try {
    await client.refreshTokenGrant(config, refreshToken);
  } catch (error) {
    return error;
  }
  throw new Error('expected the refresh to fail');
}

// docs/security.md 10.4
test('a refresh family from a password-only sign-in stops once the authenticator app is ready; one with it goes on', async () => {
  const passwordOnly = await signIn(['pwd']);
  const withOtp = await signIn(['pwd', 'otp', 'mfa']);

  // before any factor: both refresh
  let passwordRefresh = (await client.refreshTokenGrant(config, passwordOnly.refresh_token!)).refresh_token!;

  // an unverified factor protects nothing yet: still refreshing
  const secret = String((await api('POST', OTP_PATH, passwordOnly.access_token, {})).json['secret']);
  passwordRefresh = (await client.refreshTokenGrant(config, passwordRefresh)).refresh_token!;

  // the factor becomes ready (with the password-only sign-in's own access token)
  expect((await api('POST', `${OTP_PATH}/_verify`, passwordOnly.access_token, { code: codeFor(secret) })).status).toBe(200);

  const error = await refreshError(passwordRefresh);
  expect(error).toBeInstanceOf(client.ResponseBodyError);
  expect((error as client.ResponseBodyError).error).toBe('invalid_grant');
  expect((error as client.ResponseBodyError).status).toBe(400);

  const renewed = await client.refreshTokenGrant(config, withOtp.refresh_token!);
  expect(renewed.access_token).toEqual(expect.any(String));
  expect(renewed.claims()?.['amr']).toEqual(['pwd', 'otp', 'mfa']);
});
