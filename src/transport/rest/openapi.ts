/**
 * The OpenAPI 3.1 document of the REST API, generated once at start from the REST route table
 * (routes.ts): the same descriptors and `google.api.http` options that route REST calls, so the
 * document lists every route of every served service and cannot drift from what the server
 * accepts. Served at GET /openapi.json as prepared bytes.
 *
 * protobuf-es embeds no proto comments in its descriptors, so operations and schemas carry no
 * descriptions of their own; what the document says besides the types is about the mapping.
 */
import { readFileSync } from 'node:fs';
import { getOption, type DescMethod, type JsonObject } from '@bufbuild/protobuf';
import { http } from '../../../gen/google/api/annotations_pb.js';
import { ErrorDetailSchema } from '../../../gen/zitadel/message_pb.js';
import { requiredScopes } from '../../api/auth-interceptor.ts';
import { PUBLIC_SERVICES } from '../../api/services.ts';
import { routeOperation } from './openapi-operation.ts';
import { SchemaSet } from './openapi-schema.ts';
import { RestRoutes, type RestRoute } from './routes.ts';
import { staticBody, type StaticBody } from './static-body.ts';

export const OPENAPI_PATH = '/openapi.json';

export interface OpenApiOptions {
  /** `info.version`. */
  version: string;
  /** `servers[0].url`: the external URL. */
  serverUrl: string;
  /** The OpenID Connect discovery document's URL, for the openIdConnect security scheme. */
  discoveryUrl: string;
  /** Full names of the services served without a token (api/services.ts `PUBLIC_SERVICES`). */
  publicServices: ReadonlySet<string>;
  /** The scopes a token must carry for a method (api/auth-interceptor.ts `requiredScopes`). */
  requiredScopes(method: DescMethod): readonly string[];
}

const INFO_DESCRIPTION = [
  'The REST form of the Gatehouse API, generated from the protobuf descriptors and `google.api.http`',
  'bindings that route REST calls. Each operation is also served over Connect, gRPC and gRPC-web at the',
  'RPC path its description names.',
  '',
  'Bodies are proto3 JSON: lowerCamelCase field names (proto names are accepted too), 64-bit integers as',
  'strings, enums by value name, timestamps in RFC 3339, bytes in base64; unknown fields are ignored.',
  'Query parameters set the fields that neither the path nor the body binds: nested fields joined with',
  'dots, repeated fields by repeating the parameter. An error answers with the gRPC code in `code`, and',
  'the HTTP status follows from it; a bad value names the field (`oidcRequest.responseTypes[0]: must be one of …`).',
  '',
  '## Authorize',
  '',
  'Every call but health and reflection needs a bearer token: press **Authorize**, paste the token under',
  '**bearer**, and each "Try it out" sends it as `Authorization: Bearer …`. The intended token for the API',
  "is a personal access token (PAT) of a machine user that holds a manager role (`IAM_OWNER` for",
  'everything here):',
  '',
  '- on the server, `npm run gatehouse -- pat create --user NAME --out admin.pat` writes one to a file;',
  '- with the API, `POST /v2/users/{userId}/pats` (AddPersonalAccessToken) creates one for a machine user;',
  '- a first start without a bootstrap file creates the machine user `admin-api` with a PAT in the data folder.',
  '',
  'An access token from the token endpoint works too, when it carries the API audience scope',
  '`urn:<service>:iam:org:project:id:<service>:aud`. How PATs are made, kept and revoked:',
  '`docs/management-api.md#personal-access-tokens` in Gatehouse\'s repository.',
  '',
  "The examples of each call are valid requests; a list call's example asks for its first page.",
].join('\n');

export function openApiDocument(routes: readonly RestRoute[], options: OpenApiOptions): JsonObject {
  const schemas = new SchemaSet();
  const security = (method: DescMethod): JsonObject[] | undefined => {
    if (options.publicServices.has(method.parent.typeName)) return undefined;
    const scopes = [...options.requiredScopes(method)];
    return [{ openIdConnect: scopes }, { bearer: scopes }];
  };
  const paths = new Map<string, JsonObject>();
  const tags = new Set<string>();
  for (const route of routes) {
    const built = routeOperation(route, operationId(route), { schemas, security });
    if (built === undefined) continue;
    const item = paths.get(built.path) ?? {};
    if (built.httpMethod in item) continue; // the route matched first (routes.ts order) answers; so does its entry
    item[built.httpMethod] = built.operation;
    paths.set(built.path, item);
    tags.add(route.method.parent.typeName);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Gatehouse API', version: options.version, description: INFO_DESCRIPTION },
    servers: [{ url: options.serverUrl.replace(/\/+$/, '') }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: Object.fromEntries([...paths].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    components: {
      schemas: { ...schemas.components(), [ERROR_SCHEMA]: errorSchema(schemas) },
      responses: { Error: errorResponse() },
      securitySchemes: securitySchemes(options),
    },
  };
}

/** `package.Service.Method`; an additional binding's has its place among the bindings appended: `_2`, `_3`. */
function operationId(route: RestRoute): string {
  const rpc = `${route.method.parent.typeName}.${route.method.name}`;
  const rule = getOption(route.method, http);
  const index = [rule, ...rule.additionalBindings].findIndex((binding) => {
    const { pattern } = binding;
    const path = pattern.case === 'custom' ? pattern.value.path : pattern.case === undefined ? undefined : pattern.value;
    const method = pattern.case === 'custom' ? pattern.value.kind.toUpperCase() : pattern.case?.toUpperCase();
    return path === route.template.source && method === route.httpMethod;
  });
  return index <= 0 ? rpc : `${rpc}_${index + 1}`;
}

const ERROR_SCHEMA = 'gatehouse.RestError';

/** The REST error body (error-body.ts, docs/errors.md#the-api). */
function errorSchema(schemas: SchemaSet): JsonObject {
  const detail = schemas.message(ErrorDetailSchema);
  return {
    type: 'object',
    required: ['code', 'message', 'details'],
    properties: {
      code: { type: 'integer', format: 'int32', description: 'The gRPC status code; the HTTP status is derived from it.' },
      message: { type: 'string' },
      details: {
        type: 'array',
        items: {
          type: 'object',
          required: ['@type'],
          properties: { '@type': { type: 'string', examples: [`type.googleapis.com/${ErrorDetailSchema.typeName}`] }, ...(detail['properties'] as JsonObject) },
          additionalProperties: true,
          description: `A detail in the JSON form of google.protobuf.Any. Gatehouse sends ${ErrorDetailSchema.typeName}, whose \`id\` names the error.`,
        },
      },
    },
  };
}

function errorResponse(): JsonObject {
  return {
    description: 'An error. 401 (and 403 for a missing scope) carry a Bearer challenge in WWW-Authenticate.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string' } } },
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
  };
}

function securitySchemes(options: OpenApiOptions): JsonObject {
  const token = 'An access token of this issuer in `Authorization: Bearer`; the scopes listed per operation must be granted, and its audience must include the API.';
  return {
    openIdConnect: { type: 'openIdConnect', openIdConnectUrl: options.discoveryUrl, description: token },
    bearer: { type: 'http', scheme: 'bearer', description: token },
  };
}

export interface ServerSettings {
  /** GATEHOUSE_EXTERNAL_URL. */
  externalUrl: string;
  /** GATEHOUSE_SERVICE_NAME: `<service>` of the API audience scope. */
  serviceName: string;
  /** The path of the OpenID Connect discovery document. */
  discoveryPath: string;
}

/** The document of the running server: every REST route of the services in api/services.ts. */
export function serverOpenApiDocument(routes: RestRoutes, settings: ServerSettings): JsonObject {
  return openApiDocument(routes.routes, {
    version: packageVersion(),
    serverUrl: settings.externalUrl,
    discoveryUrl: `${settings.externalUrl.replace(/\/+$/, '')}${settings.discoveryPath}`,
    publicServices: PUBLIC_SERVICES,
    requiredScopes: (method) => requiredScopes(method, settings.serviceName),
  });
}

/** The version in package.json. */
export function packageVersion(): string {
  const json = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof json.version === 'string' ? json.version : '0.0.0';
}

/** The document, serialized once: GET and HEAD of /openapi.json. */
export function openApiEndpoint(document: JsonObject): StaticBody {
  return staticBody(Buffer.from(JSON.stringify(document)), {
    contentType: 'application/json',
    // Fixed for the life of the process: caches revalidate (a 304 by ETag) rather than keep an old one.
    cacheControl: 'no-cache',
    headers: { 'x-content-type-options': 'nosniff' },
  });
}
