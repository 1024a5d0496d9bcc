/**
 * The verified-JWT cache of domain/tokens.ts: a JWT access token verified once is not verified
 * again, but what can change is checked on every use: expiry, whether its signing key is still
 * published, revocation.
 */
import { fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(fixture().document);
});
afterAll(() => server.stop());

async function jwt(): Promise<string> {
  const { gh } = server.running;
  const issued = await gh.tokens.issueAccessToken({ instanceId: gh.instanceId, type: 'jwt', subject: 'someone', clientId: 'client', scopes: ['openid'], audience: ['client'] });
  return issued.token;
}

it('answers a second verification from memory with the same claims', async () => {
  const token = await jwt();
  const first = await server.running.gh.tokens.verifyAccessToken(token);
  expect(first?.sub).toBe('someone');
  expect(await server.running.gh.tokens.verifyAccessToken(token)).toBe(first);
});

it('refuses a remembered token once it has expired', async () => {
  const token = await jwt();
  const claims = await server.running.gh.tokens.verifyAccessToken(token);
  expect(await server.running.gh.tokens.verifyAccessToken(token, claims!.exp * 1000 + 1)).toBeUndefined();
});

it('refuses a remembered token once it is revoked', async () => {
  const token = await jwt();
  const claims = await server.running.gh.tokens.verifyAccessToken(token);
  await server.running.gh.tokens.revokeAccessToken(claims!, false);
  expect(await server.running.gh.tokens.verifyAccessToken(token)).toBeUndefined();
});

it('refuses a remembered token once its signing key is withdrawn', async () => {
  const token = await jwt();
  expect(await server.running.gh.tokens.verifyAccessToken(token)).toBeDefined();
  const { gh } = server.running;
  await gh.db.deleteFrom('signing_keys').execute(); // an operator withdraws a compromised key
  await gh.keys.refresh(); // the process reloads its keys (and makes a new one)
  expect(await gh.tokens.verifyAccessToken(token)).toBeUndefined();
  expect(await gh.tokens.verifyAccessToken(await jwt())).toBeDefined();
});
