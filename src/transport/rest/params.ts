/**
 * Textual parameters of a REST call, query parameters and path variables, as proto3 JSON values of
 * the fields they set: `?inheritance=true`, `?a.b=1&list=x&list=y`, `/users/{user_id}`.
 */
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { Code, type ConnectError } from '@connectrpc/connect';
import { apiError } from '../../api/errors.ts';
import { resolveFieldPath, type RestRoute } from './routes.ts';

export function queryToJson(route: RestRoute, query: URLSearchParams): JsonObject | undefined {
  const keys = [...new Set(query.keys())];
  if (keys.length === 0) return undefined;
  if (route.body === '*') throw invalid(`unknown query parameter "${keys[0]}"`);
  const json: JsonObject = {};
  for (const key of keys) {
    const fields = resolveQueryPath(route.method.input, key.split('.'));
    const leaf = fields[fields.length - 1];
    if (leaf === undefined) throw invalid(`unknown query parameter "${key}"`);
    const dotted = fields.map((f) => f.name).join('.');
    if (route.pathFields.has(dotted)) throw invalid(`query parameter "${key}" is bound by the path`);
    if (route.body !== '' && fields[0]?.name === route.body) throw invalid(`query parameter "${key}" is bound by the body`);
    const values = query.getAll(key);
    if (leaf.fieldKind === 'list') {
      setJsonPath(json, fields, values.map((v) => leafJson(fields, v, `query parameter "${key}"`)));
    } else {
      if (values.length > 1) throw invalid(`query parameter "${key}" must not repeat`);
      setJsonPath(json, fields, leafJson(fields, values[0] ?? '', `query parameter "${key}"`));
    }
  }
  return json;
}

/** Like resolveFieldPath, but each segment may be the proto name or the JSON name. */
function resolveQueryPath(message: DescMessage, path: readonly string[]): DescField[] {
  const names: string[] = [];
  let current: DescMessage | undefined = message;
  for (const segment of path) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === segment || f.jsonName === segment);
    if (field === undefined) return [];
    names.push(field.name);
    current = field.fieldKind === 'message' ? field.message : undefined;
  }
  return resolveFieldPath(message, names);
}

// Well-known types whose JSON form is a string; they may be set from a query parameter or path.
const STRING_WKT = new Set([
  'google.protobuf.Timestamp', 'google.protobuf.Duration', 'google.protobuf.FieldMask',
  'google.protobuf.StringValue', 'google.protobuf.BytesValue', 'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value', 'google.protobuf.Int32Value', 'google.protobuf.UInt32Value',
  'google.protobuf.DoubleValue', 'google.protobuf.FloatValue',
]);

/** The JSON value of one textual parameter for the last field of `fields`. */
export function leafJson(fields: readonly DescField[], raw: string, what: string): JsonValue {
  const field = fields[fields.length - 1];
  if (field === undefined) throw invalid(`unknown ${what}`);
  const kind = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  const scalar = field.fieldKind === 'list' ? field.scalar : field.fieldKind === 'scalar' ? field.scalar : undefined;
  const message = field.fieldKind === 'list' || field.fieldKind === 'message' ? field.message : undefined;
  if (kind === 'enum') return /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (kind === 'scalar') return scalar === ScalarType.BOOL ? parseBool(raw, what) : raw;
  if (kind === 'message' && message?.typeName === 'google.protobuf.BoolValue') return parseBool(raw, what);
  if (kind === 'message' && message !== undefined && STRING_WKT.has(message.typeName)) return raw;
  throw invalid(`${what} cannot set a field of this type`);
}

function parseBool(raw: string, what: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw invalid(`${what} must be true or false`);
}

export function setJsonPath(target: JsonObject, fields: readonly DescField[], value: JsonValue): void {
  let node = target;
  fields.forEach((field, i) => {
    if (i === fields.length - 1) {
      node[field.jsonName] = value;
      return;
    }
    const child = node[field.jsonName];
    const next: JsonObject = child !== null && typeof child === 'object' && !Array.isArray(child) ? child : {};
    node[field.jsonName] = next;
    node = next;
  });
}

export function invalid(message: string, cause?: unknown): ConnectError {
  const error = apiError(Code.InvalidArgument, 'REST-InvalidArgument', message);
  if (cause !== undefined) error.cause = cause;
  return error;
}
