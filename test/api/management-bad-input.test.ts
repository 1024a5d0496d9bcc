/**
 * The bad-input sweep over every route of the management API (docs/management-api.md): each REST
 * route of the five services and each of their methods over Connect gets malformed, mistyped,
 * oversized and unauthenticated input. Every answer is a 4xx in the API's error shape: never a 500,
 * never a stack trace, never an echo of what was sent.
 */
import { getOption, hasOption, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { http } from '../../gen/google/api/annotations_pb.js';
import { AppService } from '../../gen/zitadel/app/v2beta/app_service_pb.js';
import { AuthorizationService } from '../../gen/zitadel/authorization/v2beta/authorization_service_pb.js';
import { OrganizationService } from '../../gen/zitadel/org/v2/org_service_pb.js';
import { ProjectService } from '../../gen/zitadel/project/v2beta/project_service_pb.js';
import { UserService } from '../../gen/zitadel/user/v2/user_service_pb.js';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, managementDocument, MGMT, type Caller } from '../support/management.ts';

const SERVICES: DescService[] = [OrganizationService, UserService, ProjectService, AppService, AuthorizationService];
const MISSING_ID = '999999999999999999';
const MARKER = '<script>marker</script>';

interface Route {
  verb: string;
  path: string;
  body: string;
  method: DescMethod;
}

function routes(): Route[] {
  return SERVICES.flatMap((service) =>
    service.methods.flatMap((method) => {
      if (!hasOption(method, http)) return [];
      const rule = getOption(method, http);
      return [rule, ...rule.additionalBindings].map((binding) => ({
        verb: String(binding.pattern.case).toUpperCase(),
        path: String(binding.pattern.value).replace(/\{[^}]+\}/g, MISSING_ID),
        body: binding.body,
        method,
      }));
    }),
  );
}

const ROUTES = routes();
const BODY_ROUTES = ROUTES.filter((route) => route.body !== '');
const label = (route: Route) => `${route.verb} ${route.path.replace(MISSING_ID, '{id}')}`;

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer(managementDocument());
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

async function send(verb: string, path: string, init: { token?: string; body?: string | Buffer; contentType?: string } = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: verb,
    headers: {
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      ...(init.body === undefined ? {} : { 'content-type': init.contentType ?? 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  return { status: response.status, text: await response.text() };
}

/** A client error in the API's shape that tells nothing of the server's insides. */
function expectClientError(answer: { status: number; text: string }, statuses: number[]): void {
  expect(statuses).toContain(answer.status);
  const body = JSON.parse(answer.text) as { code?: unknown; message?: unknown };
  expect(typeof body.code).toBe('number');
  expect(typeof body.message).toBe('string');
  expect(answer.text).not.toMatch(/at \w+ \(|node_modules|\/src\/|marker/);
}

it('covers the REST routes of all five services', () => {
  expect(new Set(ROUTES.map((route) => route.method.parent.typeName)).size).toBe(5);
  expect(ROUTES.length).toBeGreaterThan(30);
});

describe.each(ROUTES.map((route) => [label(route), route] as const))('%s', (_label, route) => {
  it('without a token: 401', async () => {
    expectClientError(await send(route.verb, route.path, route.body === '' ? {} : { body: '{}' }), [401]);
  });

  it('with a forged token: 401', async () => {
    expectClientError(await send(route.verb, route.path, { token: `${tokens.iamAdmin.slice(0, -6)}AAAAAA`, ...(route.body === '' ? {} : { body: '{}' }) }), [401]);
  });

  it('from a caller without a management role: 403, or 400 where the empty request is refused first', async () => {
    const answer = await send(route.verb, route.path, { token: tokens.plain, ...(route.body === '' ? {} : { body: '{}' }) });
    // A request that is invalid whoever sends it may be refused before the caller's rights are
    // looked at: that answer depends on the request alone and tells nothing about the object.
    expectClientError(answer, [400, 403]);
  });

  it('an unknown query parameter: 400', async () => {
    expectClientError(await send(route.verb, `${route.path}?superUser=${encodeURIComponent(MARKER)}`, { token: tokens.iamAdmin, ...(route.body === '' ? {} : { body: '{}' }) }), [400]);
  });
});

describe.each(BODY_ROUTES.map((route) => [label(route), route] as const))('%s with a body', (_label, route) => {
  const field = route.method.input.fields.find((f) => f.fieldKind === 'scalar')?.jsonName ?? 'x';
  it.each([
    ['malformed JSON', '{"name": '],
    ['a JSON array', '[]'],
    ['a JSON string', `"${MARKER}"`],
    ['a field twice', `{"${field}": "1", "${field}": "2"}`],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ])('%s: 400', async (_name, body) => {
    expectClientError(await send(route.verb, route.path, { token: tokens.iamAdmin, body }), [400]);
  });

  it('a body over the size limit: refused before it is read whole', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(server.config.maxBodyBytes + 10) });
    expectClientError(await send(route.verb, route.path, { token: tokens.iamAdmin, body }), [413, 429]);
  });

  it('wrong types for every field: 400, or an answer about the object', async () => {
    const fields = route.method.input.fields.filter((field) => field.fieldKind === 'scalar' || field.fieldKind === 'list' || field.fieldKind === 'message');
    const body = JSON.stringify(Object.fromEntries(fields.map((field) => [field.jsonName, field.fieldKind === 'list' ? { not: 'a list' } : field.fieldKind === 'message' ? [MARKER] : { not: 'a scalar' }])));
    expectClientError(await send(route.verb, route.path, { token: tokens.iamAdmin, body }), [400]);
  });

  it('another content type: 415 or 400', async () => {
    expectClientError(await send(route.verb, route.path, { token: tokens.iamAdmin, body: 'name=x', contentType: 'application/x-www-form-urlencoded' }), [400, 415]);
  });
});

describe('redirect URIs that are no redirect URIs', () => {
  it.each([
    ['a "*" label', `https://*.evil.example/${MARKER}`, 'OIDC_APP_TYPE_NATIVE'],
    ['user information', `https://user:${MARKER}@app.example/cb`, 'OIDC_APP_TYPE_NATIVE'],
    ['a private-use scheme on a web application', `com.example.app:/${MARKER}`, 'OIDC_APP_TYPE_WEB'],
    ['javascript: on a native application', `javascript:${MARKER}`, 'OIDC_APP_TYPE_NATIVE'],
  ])('%s: 400 naming redirectUris[0], without an echo', async (_name, uri, appType) => {
    const body = JSON.stringify({ projectId: MGMT.project, name: 'refused', oidcRequest: { redirectUris: [uri], appType, authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' } });
    const answer = await send('POST', '/v2beta/applications', { token: tokens.iamAdmin, body });
    expectClientError(answer, [400]);
    expect((JSON.parse(answer.text) as { message: string }).message).toMatch(/^redirectUris\[0\]: must /);
  });
});

describe.each(SERVICES.flatMap((service) => service.methods.map((method) => [`${service.typeName}/${method.name}`, method] as const)))('Connect %s', (procedure) => {
  it('garbage protobuf and malformed JSON: 400 invalid_argument', async () => {
    for (const [contentType, body] of [['application/proto', Buffer.from([0xff, 0xff, 0xff, 0x0f])], ['application/json', '{"x": ']] as const) {
      const answer = await send('POST', `/${procedure}`, { token: tokens.iamAdmin, body, contentType });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'invalid_argument' });
    }
  });
});
