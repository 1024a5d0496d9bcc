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
 * Unknown JSON fields are dropped, as ZITADEL's gateway does (protojson `DiscardUnknown`), so a
 * client built against newer protos keeps working. They are dropped here, by the schema, rather
 * than with protobuf-es's `ignoreUnknownFields`, which would also accept unknown enum names: those
 * stay InvalidArgument (docs/decisions.md#json-input), as do invalid values and unknown query
 * parameters. Messages are ours, naming the field by its path and what it takes
 * (api/json-fields.ts); protobuf-es wording stays in `cause`.
 */
import { fromJson, mergeFromJson, type DescMessage, type JsonObject, type JsonValue, type Message } from '@bufbuild/protobuf';
import { isFieldError } from '@bufbuild/protobuf/reflect';
import type { ConnectError } from '@connectrpc/connect';
import { describeInvalidField, findInvalidField } from '../../api/json-fields.ts';
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
  const bodyJson = withoutUnknownKeys(schema, bodyToMessageJson(route, input.body));
  const message = decode(schema, bodyJson, () => fromJson(schema, bodyJson));
  const queryJson = queryToJson(route, input.query);
  if (queryJson !== undefined) decode(schema, queryJson, () => mergeFromJson(schema, message, queryJson));
  const pathJson: JsonObject = {};
  for (const [name, value] of input.variables) {
    const fields = route.pathFields.get(name) ?? [];
    setJsonPath(pathJson, fields, leafJson(fields, value, `path variable "${name}"`));
  }
  decode(schema, pathJson, () => mergeFromJson(schema, message, pathJson));
  return message;
}

function bodyToMessageJson(route: RestRoute, body: JsonValue | undefined): JsonObject {
  if (route.body === '' || body === undefined) return {};
  if (route.body === '*') {
    if (!isObject(body)) throw invalid('request body must be a JSON object');
    return body;
  }
  const field = route.method.input.fields.find((f) => f.name === route.body);
  return field === undefined ? {} : { [field.jsonName]: body };
}

/** protobuf-es's default recursion limit, which the Connect protocol meets as well (api/input-errors.ts). */
const MAX_NESTING = 100;

/** The JSON of a message without the keys that name no field, looking into nested messages. */
function withoutUnknownKeys(desc: DescMessage, json: JsonObject, depth = 0): JsonObject {
  if (desc.typeName.startsWith('google.protobuf.')) return json; // well-known types have their own JSON forms
  if (depth > MAX_NESTING) throw invalid('request message is nested too deeply'); // before the call stack runs out
  const known: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) continue;
    if (field.fieldKind === 'message') known[key] = nested(field.message, value, depth);
    else if (field.fieldKind === 'list' && field.listKind === 'message' && Array.isArray(value)) {
      known[key] = value.map((item) => nested(field.message, item, depth));
    } else if (field.fieldKind === 'map' && field.mapKind === 'message' && isObject(value)) {
      known[key] = Object.fromEntries(Object.entries(value).map(([k, item]) => [k, nested(field.message, item, depth)]));
    } else known[key] = value;
  }
  return known;
}

/** A nested message's JSON; values that are no object are left for fromJson to refuse. */
function nested(desc: DescMessage, value: JsonValue, depth: number): JsonValue {
  return isObject(value) ? withoutUnknownKeys(desc, value, depth + 1) : value;
}

function isObject(value: JsonValue): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Runs the decoding of `json` into a `schema` message; a refusal names the field's path and what it takes. */
function decode<T>(schema: DescMessage, json: JsonObject, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw describeDecodeError(schema, json, error);
  }
}

function describeDecodeError(schema: DescMessage, json: JsonObject, error: unknown): ConnectError {
  const invalidField = findInvalidField(schema, json);
  if (invalidField !== undefined) return invalid(describeInvalidField(invalidField), error);
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
