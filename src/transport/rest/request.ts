/**
 * Builds the request message of a transcoded REST call from its JSON body, query parameters and
 * path variables (google.api.http semantics):
 *
 * - `body: "*"`: the body is the request message; query parameters are not accepted.
 * - `body: "<field>"`: the body is that field; other fields may come from query parameters.
 * - no body (GET, DELETE): fields come from query parameters, `?a.b=1&list=x&list=y`.
 * - path variables are applied last and override the same field in the body or query
 *   (grpc-gateway and ZITADEL behave so).
 *
 * Unknown JSON fields and unknown query parameters are InvalidArgument, as are invalid values
 * (including unknown enum names). Messages are ours, naming the field; protobuf-es wording stays
 * in `cause`.
 */
import { fromJson, mergeFromJson, type DescMessage, type JsonObject, type JsonValue, type Message } from '@bufbuild/protobuf';
import { isFieldError } from '@bufbuild/protobuf/reflect';
import type { ConnectError } from '@connectrpc/connect';
import { invalid, leafJson, queryToJson, setJsonPath } from './params.ts';
import type { RestRoute } from './routes.ts';

export interface RestInput {
  /** The parsed JSON body, or undefined when the request has none. */
  body: JsonValue | undefined;
  query: URLSearchParams;
  variables: ReadonlyMap<string, string>;
}

export function buildRequestMessage(route: RestRoute, input: RestInput): Message {
  const schema = route.method.input;
  const bodyJson = bodyToMessageJson(route, input.body);
  const unknown = findUnknownKey(schema, bodyJson, '');
  if (unknown !== undefined) throw invalid(`unknown field "${unknown}"`);
  const message = decode(schema, () => fromJson(schema, bodyJson));
  const queryJson = queryToJson(route, input.query);
  if (queryJson !== undefined) decode(schema, () => mergeFromJson(schema, message, queryJson));
  const pathJson: JsonObject = {};
  for (const [name, value] of input.variables) {
    const fields = route.pathFields.get(name) ?? [];
    setJsonPath(pathJson, fields, leafJson(fields, value, `path variable "${name}"`));
  }
  decode(schema, () => mergeFromJson(schema, message, pathJson));
  return message;
}

function bodyToMessageJson(route: RestRoute, body: JsonValue | undefined): JsonObject {
  if (route.body === '' || body === undefined) return {};
  if (route.body === '*') {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('request body must be a JSON object');
    return body;
  }
  const field = route.method.input.fields.find((f) => f.name === route.body);
  return field === undefined ? {} : { [field.jsonName]: body };
}

/** The first key (dotted JSON path) that names no field, looking into nested messages. */
export function findUnknownKey(desc: DescMessage, json: JsonValue, prefix: string): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  if (desc.typeName.startsWith('google.protobuf.')) return undefined; // well-known types have their own JSON forms
  for (const [key, value] of Object.entries(json)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) return prefix + key;
    let found: string | undefined;
    if (field.fieldKind === 'message') found = findUnknownKey(field.message, value, `${prefix}${key}.`);
    else if (field.fieldKind === 'list' && field.listKind === 'message' && Array.isArray(value)) {
      for (const item of value) found ??= findUnknownKey(field.message, item, `${prefix}${key}[].`);
    } else if (field.fieldKind === 'map' && field.mapKind === 'message' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const item of Object.values(value)) found ??= findUnknownKey(field.message, item, `${prefix}${key}{}.`);
    }
    if (found !== undefined) return found;
  }
  return undefined;
}

function decode<T>(schema: DescMessage, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw describeDecodeError(schema, error);
  }
}

function describeDecodeError(schema: DescMessage, error: unknown): ConnectError {
  const cause = error instanceof Error ? error.cause : undefined;
  if (isFieldError(cause)) {
    const target = cause.field();
    if (target.kind === 'oneof') {
      const members = target.fields.map((f) => f.jsonName).join(', ');
      return invalid(`only one of ${members} may be set`, error);
    }
    return invalid(`invalid value for field "${target.jsonName}"`, error);
  }
  return invalid(`request does not match ${schema.typeName}`, error);
}
