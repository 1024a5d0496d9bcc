/**
 * GET /openapi.json and the /docs files over HTTP: the document is valid OpenAPI 3.1, lists every
 * REST route the transcoder serves with its parameters bound as the transcoder binds them, and is
 * served like its neighbours. A small service built at run time covers what today's protos do not
 * (nested and repeated query parameters, a named body, a path pattern, maps, oneofs), and the
 * transcoder itself confirms that every query parameter the document lists is accepted.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { create, createFileRegistry, createRegistry, setExtension, type DescService, type JsonObject, type JsonValue, type MessageInitShape } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
  file_google_protobuf_timestamp,
  type MethodDescriptorProtoSchema,
  type MethodOptions,
} from '@bufbuild/protobuf/wkt';
import { Validator } from '@seriousme/openapi-schema-validator';
import { http as httpOption } from '../../gen/google/api/annotations_pb.js';
import { HttpRuleSchema } from '../../gen/google/api/http_pb.js';
import { requiredScopes } from '../../src/api/auth-interceptor.ts';
import { silentLogger } from '../../src/api/logger.ts';
import { createServingProbe } from '../../src/api/serving-probe.ts';
import { PUBLIC_SERVICES, registerServices } from '../../src/api/services.ts';
import { apiAudienceScope } from '../../src/config/index.ts';
import { createRecordingRouter } from '../../src/transport/rest/invoke.ts';
import { openApiDocument } from '../../src/transport/rest/openapi.ts';
import { RestRoutes } from '../../src/transport/rest/routes.ts';

/** The REST routes of `services` as the transcoder builds them, from what is registered on a router (descriptors only). */
function restRoutesOf(services: readonly DescService[]): RestRoutes {
  const { router, calls } = createRecordingRouter();
  for (const service of services) router.service(service, {});
  return new RestRoutes(calls);
}
import type { RestRoute } from '../../src/transport/rest/routes.ts';
import { createRestTranscoder } from '../../src/transport/rest/transcoder.ts';
import { buildRequestMessage } from '../../src/transport/rest/request.ts';
import { fixture, IDS } from '../support/fixtures.ts';
import { administratorToken } from '../support/api-token.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { request } from '../support/http.ts';

type Operation = JsonObject & { operationId: string; summary: string; parameters?: Parameter[]; requestBody?: { content: { 'application/json': { schema: JsonObject; example?: JsonValue } } }; security?: Array<Record<string, string[]>> };
type Parameter = { name: string; in: string; required?: boolean; schema: JsonObject; style?: string; explode?: boolean; description?: string; example?: JsonValue };
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
  info: { version: string };
  servers: Array<{ url: string }>;
}

/** The OpenAPI path of a route: `{name=shelves/*}` is written `{name}`. */
function openApiPath(route: RestRoute): string {
  return route.template.source.replace(/\{([^}=]+)=[^}]*\}/g, '{$1}');
}

function schemaOf(document: Document, schema: JsonObject): JsonObject {
  const ref = schema['$ref'];
  return typeof ref === 'string' ? (document.components.schemas[ref.replace('#/components/schemas/', '')] as JsonObject) : schema;
}

function propertiesOf(document: Document, schema: JsonObject): Record<string, JsonObject> {
  return (schemaOf(document, schema)['properties'] ?? {}) as Record<string, JsonObject>;
}

async function validate(document: unknown): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as Record<string, unknown>); // resolveRefs rewrites what it is given
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
  expect(() => validator.resolveRefs()).not.toThrow();
}

/** A GET over a raw socket path: fetch would resolve dot segments before sending. */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /openapi.json', () => {
  let server: TestServer;
  let reply: Awaited<ReturnType<typeof request>>;
  let document: Document;
  let routes: readonly RestRoute[];
  let table: RestRoutes;

  beforeAll(async () => {
    server = await startTestServer(fixture().document);
    reply = await request(`${server.url}/openapi.json`);
    document = JSON.parse(reply.text) as Document;
    // The transcoder's own route table, built as the API handler builds it (server/api-handler.ts).
    const { gh } = server.running;
    const { router, calls } = createRecordingRouter();
    registerServices(router, gh, { db: gh.db, instanceId: () => gh.instanceId, probe: createServingProbe(async () => true), reflection: true });
    table = createRestTranscoder(calls, { maxBodyBytes: 1024, registry: createRegistry(), log: silentLogger }).routes;
    routes = table.routes;
  });
  afterAll(() => server.stop());

  /** Every operation with its method, its example body and its path filled in with the examples (or `ids`, by parameter name). */
  function examples(ids: Record<string, string> = {}): Array<{ name: string; method: string; path: string; body: JsonValue | undefined; list: boolean }> {
    return Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item).map(([method, operation]) => {
        const parameters = new Map((operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, p]));
        const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? String(parameters.get(name)?.example));
        const body = operation.requestBody?.content['application/json'].example;
        return { name: operation.operationId, method: method.toUpperCase(), path, body, list: /^(List|Search)[A-Z]/.test(operation.summary) };
      }),
    );
  }

  it('gives every operation examples that the transcoder takes as a request: a body, and each path variable', () => {
    const refused: string[] = [];
    for (const { name, method, path, body } of examples()) {
      const match = table.match(method, path);
      if (match.kind !== 'found') {
        refused.push(`${name}: ${method} ${path} matches no route`);
        continue;
      }
      try {
        buildRequestMessage(match.route, { body, query: new URLSearchParams(), variables: match.variables });
      } catch (error) {
        refused.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(refused).toEqual([]);
    // what Swagger UI would otherwise make up: a 90-digit offset, every member of a oneof
    const listUsers = document.paths['/v2/users']?.['post']?.requestBody?.content['application/json'];
    expect(listUsers?.example).toEqual({ query: { offset: '0', limit: 10 } });
    const create = document.paths['/v2beta/applications']?.['post']?.requestBody?.content['application/json'].example as Record<string, unknown>;
    expect(Object.keys(create).filter((key) => key === 'oidcRequest' || key === 'apiRequest')).toHaveLength(1);
  });

  it('answers 200 to the example of every list call, for an administrator', async () => {
    const token = await administratorToken(server);
    // a list under an object (a user's passkeys, a project's roles) takes that object's real id; the
    // passkey calls refuse while the issuer is an IP address (docs/passkeys.md#the-relying-party)
    const calls = examples({ user_id: IDS.alice, project_id: IDS.project, org_id: IDS.org }).filter((call) => call.list && !call.name.endsWith('.ListPasskeys'));
    expect(calls.map((call) => call.name)).toEqual(expect.arrayContaining(['zitadel.user.v2.UserService.ListUsers', 'zitadel.org.v2.OrganizationService.ListOrganizations']));
    const answers = await Promise.all(
      calls.map(async ({ name, method, path, body }) => {
        const reply = await request(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return `${name} ${reply.status}${reply.status === 200 ? '' : ` ${reply.text}`}`;
      }),
    );
    expect(answers).toEqual(calls.map(({ name }) => `${name} 200`));
  });

  it('is a valid OpenAPI 3.1 document of this server', async () => {
    expect(reply.status).toBe(200);
    await validate(document);
    expect(document.servers).toEqual([{ url: server.config.externalUrl }]);
    expect(document.info.version).toBe((JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
  });

  it('lists every REST route of the transcoder with its method, and nothing else', () => {
    expect(routes.length).toBeGreaterThan(10);
    const listed = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    const expected = routes.map((route) => `${route.httpMethod} ${openApiPath(route)}`);
    expect([...listed].sort()).toEqual([...new Set(expected)].sort());
    for (const route of routes) {
      const operation = document.paths[openApiPath(route)]?.[route.httpMethod.toLowerCase()];
      expect(operation?.summary).toBe(route.method.name);
      expect(operation?.operationId).toBe(`${route.method.parent.typeName}.${route.method.name}`);
    }
    // the API's first operations (docs/endpoints.md#the-api) among them
    expect(Object.keys(document.paths['/auth/v1/users/me/auth_factors/otp'] ?? {}).sort()).toEqual(['delete', 'post']);
    expect(Object.keys(document.paths['/v2/features/instance'] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
  });

  it('has no route under /oauth/ or /ui/, which the dispatcher hands to Express without the API (server/dispatch.ts)', () => {
    expect(routes.map((route) => route.firstSegment).filter((segment) => segment === undefined || segment === 'oauth' || segment === 'ui')).toEqual([]);
  });

  it('lists the query parameters of a GET route', () => {
    const get = document.paths['/v2/features/instance']?.['get'];
    expect(get?.parameters).toEqual([{ name: 'inheritance', in: 'query', schema: { type: 'boolean' } }]);
    expect(get?.requestBody).toBeUndefined();
  });

  it('leaves the fields bound by the path out of a body "*" and takes no query parameter there', () => {
    const put = document.paths['/v3alpha/users/{user_id}/email']?.['put'];
    expect(put?.parameters).toEqual([{ name: 'user_id', in: 'path', required: true, schema: { type: 'string' }, example: '123456789012345678' }]);
    const body = put?.requestBody?.content['application/json'].schema ?? {};
    expect(Object.keys(propertiesOf(document, body))).toEqual(['email']);
    // every route with body "*": no path-bound field in the body, no query parameter
    for (const route of routes.filter((r) => r.body === '*')) {
      const operation = document.paths[openApiPath(route)]?.[route.httpMethod.toLowerCase()];
      const properties = Object.keys(propertiesOf(document, operation?.requestBody?.content['application/json'].schema ?? {}));
      for (const fields of route.pathFields.values()) expect(properties).not.toContain(fields[0]?.jsonName);
      expect((operation?.parameters ?? []).filter((p) => p.in === 'query')).toEqual([]);
    }
  });

  it('writes a oneof as mutually exclusive members', () => {
    const resend = document.paths['/v3alpha/users/{user_id}/email/resend']?.['post']?.requestBody?.content['application/json'].schema ?? {};
    expect(resend['description']).toBe('At most one of `sendCode`, `returnCode` may be set (oneof `verification`).');
    expect(resend['dependentSchemas']).toEqual({ sendCode: { not: { required: ['returnCode'] } }, returnCode: { not: { required: ['sendCode'] } } });
  });

  it('writes 64-bit integers as strings, timestamps as date-time and enums as string enums', () => {
    const details = document.components.schemas['zitadel.object.v2.Details']?.['properties'] as Record<string, JsonObject>;
    expect(details['sequence']).toEqual({ type: 'string', format: 'uint64', pattern: '^[0-9]+$' });
    expect(details['changeDate']).toMatchObject({ type: 'string', format: 'date-time' });
    expect(document.components.schemas['zitadel.feature.v2.Source']).toMatchObject({ type: 'string', enum: ['SOURCE_UNSPECIFIED', 'SOURCE_SYSTEM', 'SOURCE_INSTANCE'] });
    expect(propertiesOf(document, document.components.schemas['zitadel.feature.v2.FeatureFlag'] ?? {})['source']).toEqual({ $ref: '#/components/schemas/zitadel.feature.v2.Source' });
  });

  it('describes the error body as the default response', () => {
    const get = document.paths['/v2/features/instance']?.['get'];
    expect(get?.['responses']).toMatchObject({ default: { $ref: '#/components/responses/Error' } });
    expect(document.components.schemas['gatehouse.RestError']).toMatchObject({ required: ['code', 'message', 'details'] });
  });

  it('puts bearer security with the required scopes on every operation of a non-public service', () => {
    const api = apiAudienceScope(server.config.serviceName);
    expect(document.paths['/auth/v1/users/me/auth_factors/otp']?.['post']?.security).toEqual([{ openIdConnect: ['openid'] }, { bearer: ['openid'] }]);
    expect(document.paths['/v2/features/instance']?.['get']?.security).toEqual([{ openIdConnect: ['openid', api] }, { bearer: ['openid', api] }]);
    expect(document.components.securitySchemes['bearer']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes['openIdConnect']).toMatchObject({ openIdConnectUrl: `${server.config.externalUrl}/.well-known/openid-configuration` });
    for (const route of routes) {
      const operation = document.paths[openApiPath(route)]?.[route.httpMethod.toLowerCase()];
      if (PUBLIC_SERVICES.has(route.method.parent.typeName)) expect(operation?.security).toBeUndefined();
      else expect(operation?.security?.[1]?.['bearer']).toEqual(requiredScopes(route.method, server.config.serviceName));
    }
  });

  it('is JSON that caches revalidate by ETag, and compressed on request', async () => {
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.headers.get('cache-control')).toBe('no-cache');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = reply.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await request(`${server.url}/openapi.json`, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const zipped = await request(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.text).toBe(reply.text);
    const plain = await request(`${server.url}/openapi.json`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(Number(plain.headers.get('content-length'))).toBe(Buffer.byteLength(reply.text));
  });

  it('answers HEAD like GET without a body, and other methods with 405 as discovery does', async () => {
    const head = await request(`${server.url}/openapi.json`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(reply.text)));
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const other = await request(`${server.url}/openapi.json`, { method });
      const discovery = await request(`${server.url}/.well-known/openid-configuration`, { method });
      expect([other.status, other.headers.get('allow'), other.json]).toEqual([405, 'GET', { error: 'invalid_request', error_description: 'method not allowed; use GET' }]);
      expect(other.status).toBe(discovery.status);
    }
  });

  describe('/docs over HTTP', () => {
    it('serves the page with its own strict policy and the package files with their types', async () => {
      const page = await request(`${server.url}/docs`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toBe(
        `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${server.config.externalUrl}; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
      );
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      const links = [...page.text.matchAll(/(?:href|src)="(\/docs\/[^"]+)"/g)].map((m) => m[1] as string);
      expect(links.map((l) => l.split('?')[0]).sort()).toEqual(['/docs/favicon-16x16.png', '/docs/favicon-32x32.png', '/docs/start.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']);
      const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' };
      for (const link of links) {
        const asset = await request(`${server.url}${link}`);
        expect([link, asset.status, asset.headers.get('content-type')]).toEqual([link, 200, types[link.split('?')[0]?.split('.').pop() ?? '']]);
        expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable'); // the link names the content
        expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      }
      expect((await request(`${server.url}/docs/swagger-ui.css`)).headers.get('cache-control')).toBe('no-cache');
      expect((await request(`${server.url}/docs/swagger-ui.css?v=0000`)).headers.get('cache-control')).toBe('no-cache');
      // the login UI keeps its own policy
      const login = await request(`${server.url}/ui/login/assets/gatehouse.css`);
      expect(login.headers.get('content-security-policy')).toBeNull();
    });

    it('answers 404 for other paths under /docs, without file system paths, and cannot reach other files', async () => {
      for (const path of [
        '/docs/index.html',
        '/docs/swagger-initializer.js',
        '/docs/package.json',
        '/docs/../../package.json',
        '/docs/../package.json',
        '/docs/%2e%2e/%2e%2e/package.json',
        '/docs/..%2f..%2fpackage.json',
        '/docs/%2e%2e%2f%2e%2e%2fpackage.json',
        '/docs/%252e%252e%252fpackage.json',
        '/docs/swagger-ui.css/../../../package.json',
        '/docs/..\\..\\package.json',
        '/docs//etc/passwd',
        '/docs/%00',
      ]) {
        const answer = await rawGet(server.url, path);
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.body).not.toMatch(/node_modules|\/work\/|"dependencies"|root:/);
      }
      expect((await request(`${server.url}/docs/start.js`, { method: 'POST' })).status).toBe(405);
    });
  });
});

// ---- a service built at run time, for what today's protos do not show ----

const PACKAGE = 'openapi.test.v1';

interface FieldInit {
  name: string;
  number: number;
  type: Type;
  label: Label;
  jsonName: string;
  typeName: string;
  oneofIndex?: number;
}

function field(name: string, number: number, type: Type, more: Partial<FieldInit> = {}): FieldInit {
  const jsonName = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  return { name, number, type, label: Label.OPTIONAL, jsonName, typeName: '', ...more };
}
const repeated = { label: Label.REPEATED };
const ref = (name: string): Partial<FieldInit> => ({ typeName: name.startsWith('.') ? name : `.${PACKAGE}.${name}` });

function bindings(init: MessageInitShape<typeof HttpRuleSchema>): MethodOptions {
  const options = create(MethodOptionsSchema);
  setExtension(options, httpOption, create(HttpRuleSchema, init));
  return options;
}

function method(name: string, init: MessageInitShape<typeof HttpRuleSchema>): MessageInitShape<typeof MethodDescriptorProtoSchema> {
  return { name, inputType: `.${PACKAGE}.ThingRequest`, outputType: `.${PACKAGE}.Thing`, options: bindings(init) };
}

function testService(): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: 'openapi_test.proto',
    package: PACKAGE,
    syntax: 'proto3',
    dependency: ['google/protobuf/timestamp.proto'],
    enumType: [{ name: 'Kind', value: [{ name: 'KIND_UNSPECIFIED', number: 0 }, { name: 'KIND_A', number: 1 }] }],
    messageType: [
      {
        name: 'Inner',
        field: [field('count', 1, Type.INT64), field('tags', 2, Type.STRING, repeated), field('kind', 3, Type.ENUM, ref('Kind')), field('child', 4, Type.MESSAGE, ref('Inner')), field('blob', 5, Type.BYTES)],
      },
      {
        name: 'Thing',
        field: [
          field('thing_id', 1, Type.STRING),
          field('inner', 2, Type.MESSAGE, ref('Inner')),
          field('labels', 3, Type.MESSAGE, { ...repeated, ...ref('Thing.LabelsEntry') }),
          field('by_name', 4, Type.STRING, { oneofIndex: 0 }),
          field('by_number', 5, Type.INT32, { oneofIndex: 0 }),
          field('at', 6, Type.MESSAGE, ref('.google.protobuf.Timestamp')),
          field('items', 7, Type.MESSAGE, { ...repeated, ...ref('Inner') }),
        ],
        oneofDecl: [{ name: 'choice' }],
        nestedType: [{ name: 'LabelsEntry', options: { mapEntry: true }, field: [field('key', 1, Type.STRING), field('value', 2, Type.INT64)] }],
      },
      {
        name: 'ThingRequest',
        field: [
          field('thing_id', 1, Type.STRING),
          field('inner', 2, Type.MESSAGE, ref('Inner')),
          field('kinds', 3, Type.ENUM, { ...repeated, ...ref('Kind') }),
          field('since', 4, Type.MESSAGE, ref('.google.protobuf.Timestamp')),
          field('thing', 5, Type.MESSAGE, ref('Thing')),
          field('name', 6, Type.STRING),
        ],
      },
    ],
    service: [
      {
        name: 'Things',
        method: [
          method('GetThing', { pattern: { case: 'get', value: '/v1/things/{thing_id}' }, additionalBindings: [{ pattern: { case: 'get', value: '/v1/{name=shelves/*}/things' } }] }),
          method('RunThing', { pattern: { case: 'post', value: '/v1/things/{thing_id}:run' }, body: '*' }),
          method('PutThing', { pattern: { case: 'put', value: '/v1/things/{thing.thing_id}' }, body: 'thing' }),
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, (name) => (name === 'google/protobuf/timestamp.proto' ? file_google_protobuf_timestamp : undefined));
  const service = registry.getService(`${PACKAGE}.Things`);
  if (service === undefined) throw new Error('test service not built');
  return service;
}

describe('the document of a service built at run time', () => {
  const service = testService();
  const routes = restRoutesOf([service]).routes;
  const document = openApiDocument(routes, {
    version: '9.9.9',
    serverUrl: 'https://id.example.test/',
    discoveryUrl: 'https://id.example.test/.well-known/openid-configuration',
    publicServices: new Set([service.typeName]),
    requiredScopes: () => ['openid'],
  }) as unknown as Document;
  const get = document.paths['/v1/things/{thing_id}']?.['get'];
  let transcoder: http.Server;
  let base: string;

  beforeAll(async () => {
    const { router, calls } = createRecordingRouter();
    router.service(service, {}); // no implementation: a call the transcoder accepts reaches the service and is 501
    const rest = createRestTranscoder(calls, { maxBodyBytes: 4096, registry: createRegistry(), log: silentLogger });
    transcoder = http.createServer((req, res) => void rest.handle(req, res).then((handled) => handled || res.writeHead(404).end()));
    await new Promise<void>((resolve) => transcoder.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(transcoder.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => transcoder.close(resolve)));

  it('is valid, public services carry no security, and a second binding gets its own operation', async () => {
    await validate(document);
    expect(document.servers).toEqual([{ url: 'https://id.example.test' }]);
    expect(get?.security).toBeUndefined();
    const shelves = document.paths['/v1/{name}/things']?.['get'];
    expect(shelves?.operationId).toBe(`${PACKAGE}.Things.GetThing_2`);
    expect(shelves?.parameters?.[0]).toEqual({
      name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: 'Path segments matching `shelves/*`, sent with their slashes unencoded.', example: 'shelves/example',
    });
    expect(Object.keys(document.paths['/v1/things/{thing_id}:run'] ?? {})).toEqual(['post']);
  });

  // A message nested in itself is listed to its first repetition (inner.child.count is accepted, not listed).
  it('lists nested fields with dots and repeated fields by repetition, not maps, message lists or recursion', () => {
    const query = (get?.parameters ?? []).filter((p) => p.in === 'query');
    expect(query.map((p) => p.name)).toEqual([
      'inner.count', 'inner.tags', 'inner.kind', 'inner.blob', 'kinds', 'since',
      'thing.thingId', 'thing.inner.count', 'thing.inner.tags', 'thing.inner.kind', 'thing.inner.blob', 'thing.byName', 'thing.byNumber', 'thing.at',
      'name',
    ]);
    const by = (name: string): Parameter | undefined => query.find((p) => p.name === name);
    expect(by('inner.count')?.schema).toEqual({ type: 'string', format: 'int64', pattern: '^-?[0-9]+$' });
    expect(by('inner.tags')).toMatchObject({ style: 'form', explode: true, schema: { type: 'array', items: { type: 'string' } } });
    expect(by('kinds')?.schema).toEqual({ type: 'array', items: { $ref: `#/components/schemas/${PACKAGE}.Kind` } });
    expect(by('since')?.schema).toMatchObject({ type: 'string', format: 'date-time' });
    expect(by('inner.blob')?.schema).toEqual({ type: 'string', contentEncoding: 'base64' });
  });

  it('lists exactly the query parameters the transcoder accepts', async () => {
    const sample = (p: Parameter): string[] => {
      const schema = p.schema['type'] === 'array' ? (p.schema['items'] as JsonObject) : p.schema;
      const one = schema['$ref'] !== undefined ? 'KIND_A' : schema['format'] === 'date-time' ? '2026-01-02T03:04:05Z' : schema['format'] === 'int64' ? '-5' : schema['format'] === 'int32' ? '7' : schema['contentEncoding'] === 'base64' ? 'AQI=' : 'x';
      return p.schema['type'] === 'array' ? [one, one] : [one];
    };
    const query = (get?.parameters ?? []).filter((p) => p.in === 'query');
    for (const parameter of query) {
      const search = new URLSearchParams(sample(parameter).map((v): [string, string] => [parameter.name, v]));
      const answer = await fetch(`${base}/v1/things/t1?${search}`);
      expect([parameter.name, answer.status]).toEqual([parameter.name, 501]);
    }
    for (const unlisted of ['thing.labels', 'thing.items', 'thingId', 'thing.at.seconds']) {
      const answer = await fetch(`${base}/v1/things/t1?${unlisted}=1`);
      expect([unlisted, answer.status]).toEqual([unlisted, 400]);
    }
    // body "*" takes none
    const run = (query: string): Promise<Response> => fetch(`${base}/v1/things/t1:run${query}`, { method: 'POST', body: '{"name":"x"}', headers: { 'content-type': 'application/json' } });
    expect((await run('')).status).toBe(501);
    expect((await run('?name=x')).status).toBe(400);
  });

  it('binds a named body field without the fields the path binds inside it', () => {
    const put = document.paths['/v1/things/{thing.thing_id}']?.['put'];
    expect(put?.parameters?.[0]).toEqual({ name: 'thing.thing_id', in: 'path', required: true, schema: { type: 'string' }, example: '123456789012345678' });
    const body = put?.requestBody?.content['application/json'].schema ?? {};
    expect(Object.keys(body['properties'] as JsonObject)).toEqual(['inner', 'labels', 'byName', 'byNumber', 'at', 'items']);
    expect((body['properties'] as Record<string, JsonObject>)['labels']).toEqual({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string', format: 'int64', pattern: '^-?[0-9]+$' } });
    expect(body['dependentSchemas']).toEqual({ byName: { not: { required: ['byNumber'] } }, byNumber: { not: { required: ['byName'] } } });
    const query = (put?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    expect(query).toEqual(['thingId', 'inner.count', 'inner.tags', 'inner.kind', 'inner.blob', 'kinds', 'since', 'name']);
    const run = document.paths['/v1/things/{thing_id}:run']?.['post']?.requestBody?.content['application/json'].schema ?? {};
    expect(Object.keys(run['properties'] as JsonObject)).toEqual(['inner', 'kinds', 'since', 'thing', 'name']);
  });

  it('keeps recursive messages as references', () => {
    const inner = document.components.schemas[`${PACKAGE}.Inner`];
    expect((inner?.['properties'] as Record<string, JsonObject>)['child']).toEqual({ $ref: `#/components/schemas/${PACKAGE}.Inner` });
  });
});
