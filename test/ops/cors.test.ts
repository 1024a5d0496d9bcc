/** CORS for browser apps: origins of registered redirect URIs only, preflights answered, no credentials. */
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic } from '../support/http.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(fixture().document);
});
afterAll(() => server.stop());

const APP_ORIGIN = 'http://localhost:3000'; // shop-web's and shop-spa's redirect URIs

function preflight(path: string, origin: string, method = 'POST', headers = 'content-type') {
  return fetch(`${server.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

it.each(['/oauth/v2/token', '/oidc/v1/userinfo', '/v2/features/instance', '/zitadel.feature.v2.FeatureService/GetInstanceFeatures'])(
  'answers a preflight to %s from a registered origin',
  async (path) => {
    const response = await preflight(path, APP_ORIGIN, 'POST', 'authorization, content-type, x-grpc-web');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(response.headers.get('access-control-allow-headers')).toContain('x-grpc-web');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toBe('Origin');
  },
);

it('allows the header naming the organization of a management call and an asset upload', async () => {
  const response = await preflight('/assets/v1/org/policy/label/logo', APP_ORIGIN, 'POST', 'authorization, x-zitadel-orgid');
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-headers')?.split(', ')).toContain('x-zitadel-orgid');
});

it('allows every method of the REST routes, PATCH (UpdateApplication) among them', async () => {
  const response = await preflight('/v2beta/applications/1', APP_ORIGIN, 'PATCH', 'authorization, content-type');
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-methods')?.split(', ')).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
});

it('refuses a preflight from an unknown origin (no CORS headers)', async () => {
  const response = await preflight('/oauth/v2/token', 'https://evil.example');
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-origin')).toBeNull();
});

it('marks an allowed cross-origin response and exposes the gRPC headers', async () => {
  const response = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { origin: APP_ORIGIN, 'content-type': 'application/x-www-form-urlencoded', authorization: basic('reporter', SECRETS.reporter) },
    body: 'grant_type=client_credentials&scope=openid',
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  expect(response.headers.get('access-control-expose-headers')).toContain('grpc-status');
  const foreign = await fetch(`${server.url}/oauth/v2/keys`, { headers: { origin: 'https://evil.example' } });
  expect(foreign.status).toBe(200);
  expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
});

it('follows changes to the registered redirect URIs', async () => {
  const { db, instanceId } = server.running.gh;
  await db.updateTable('apps').set({ redirect_uris: ['https://new.example/cb'] }).where('client_id', '=', 'shop-post').execute();
  const { appendEvent } = await import('../../src/domain/kernel/events.ts');
  await appendEvent(db, { instanceId, aggregateId: 'shop-post', resourceOwner: instanceId, type: 'app.changed', payload: { changed: ['redirect_uris'] } });
  let allowed: string | null = null;
  for (let i = 0; i < 30 && allowed === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    allowed = (await preflight('/oauth/v2/token', 'https://new.example')).headers.get('access-control-allow-origin');
  }
  expect(allowed).toBe('https://new.example');
});
