/**
 * Examples for the OpenAPI document: a request body and path variables for every operation that the
 * API takes as they stand, so that the "Try it out" default of /docs is a valid request. Left to
 * itself, Swagger UI makes up values from the schemas: a 90-digit string for a 64-bit integer's
 * pattern, "string" for every id and URI, every member of a oneof at once.
 *
 * - A list call (`List…`, `Search…`) gets its first page and nothing else: offset 0, limit 10, no
 *   filters, so an administrator's "Execute" answers 200 with what there is.
 * - Any other call gets a value for each field a path does not bind, chosen by the field's name (an
 *   email for `email`, a URL for `redirectUris`, an 18-digit id for `…Id`), enums by their first
 *   named value, numbers in range, the first member of a oneof only, one item per list, down to a
 *   few levels of nesting.
 *
 * Query parameters get none: they are optional, and Swagger UI sends those left empty not at all.
 * test/api/openapi.test.ts reads every example through the transcoder (request.ts).
 */
import { ScalarType, type DescEnum, type DescField, type DescMessage, type DescMethod, type JsonObject, type JsonValue } from '@bufbuild/protobuf';

/** A plausible id: ZITADEL's ids are decimal strings of 18 digits. */
export const EXAMPLE_ID = '123456789012345678';
const PAGE_SIZE = 10;
const MAX_DEPTH = 4;

/** Whether the method lists things: its example is the first page (`List…`, `Search…`). */
export function isListCall(method: DescMethod): boolean {
  return /^(List|Search)[A-Z]/.test(method.name);
}

/**
 * The example of a request body of type `desc` without the fields at `excluded` (proto field paths,
 * the ones the path binds), for a call of `method`.
 */
export function messageExample(method: DescMethod, desc: DescMessage, excluded: readonly (readonly string[])[] = []): JsonObject {
  if (isListCall(method)) return firstPage(desc, excluded);
  return exampleOf(desc, excluded, 0, new Set());
}

/** The example of one field's JSON value (a body bound to a field, a path variable). */
export function fieldExample(method: DescMethod, field: DescField): JsonValue | undefined {
  if (isListCall(method) && field.fieldKind === 'message') return firstPage(field.message, []);
  return valueOf(field, 0, new Set());
}

/** A list call's example: only its paging message, at the first page. */
function firstPage(desc: DescMessage, excluded: readonly (readonly string[])[]): JsonObject {
  const example: JsonObject = {};
  for (const field of desc.fields) {
    if (excluded.some((path) => path.length === 1 && path[0] === field.name)) continue;
    if (field.fieldKind !== 'message') continue;
    const paging = field.message.fields.filter((f) => f.name === 'offset' || f.name === 'limit');
    if (paging.length !== 2) continue;
    example[field.jsonName] = Object.fromEntries(paging.map((f) => [f.jsonName, f.name === 'limit' ? PAGE_SIZE : scalarExample(f, ScalarType.UINT64)]));
  }
  return example;
}

function exampleOf(desc: DescMessage, excluded: readonly (readonly string[])[], depth: number, seen: ReadonlySet<string>): JsonObject {
  const example: JsonObject = {};
  const inner = new Set([...seen, desc.typeName]);
  for (const field of desc.fields) {
    const below = excluded.filter((path) => path[0] === field.name);
    if (below.some((path) => path.length === 1)) continue;
    if (field.oneof !== undefined && field.oneof.fields[0] !== field) continue; // one member of a oneof
    const nested = below.map((path) => path.slice(1));
    const value =
      nested.length > 0 && field.fieldKind === 'message' ? exampleOf(field.message, nested, depth + 1, inner) : valueOf(field, depth, inner);
    if (value !== undefined) example[field.jsonName] = value;
  }
  return example;
}

function valueOf(field: DescField, depth: number, seen: ReadonlySet<string>): JsonValue | undefined {
  switch (field.fieldKind) {
    case 'scalar':
      return scalarExample(field, field.scalar);
    case 'enum':
      return enumExample(field.enum);
    case 'message':
      return messageValue(field, field.message, depth, seen);
    case 'list': {
      const item = field.listKind === 'scalar' ? scalarExample(field, field.scalar) : field.listKind === 'enum' ? enumExample(field.enum) : messageValue(field, field.message, depth, seen);
      return item === undefined ? undefined : [item];
    }
    case 'map':
      return {};
  }
}

/** A message-typed value: a well-known type's JSON form, or the message's own example, nesting a few levels deep. */
function messageValue(field: DescField, desc: DescMessage, depth: number, seen: ReadonlySet<string>): JsonValue | undefined {
  switch (desc.typeName) {
    case 'google.protobuf.Timestamp':
      return '2030-01-01T00:00:00Z';
    case 'google.protobuf.Duration':
      return /skew/i.test(field.name) ? '0s' : '3600s'; // a clock skew is capped at seconds
    case 'google.protobuf.Struct':
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.FieldMask':
    case 'google.protobuf.Value':
    case 'google.protobuf.ListValue':
    case 'google.protobuf.Any':
      return undefined;
  }
  if (desc.typeName.startsWith('google.protobuf.')) {
    const wrapped = desc.fields.find((f) => f.name === 'value');
    return wrapped?.fieldKind === 'scalar' ? scalarExample(field, wrapped.scalar) : undefined;
  }
  if (depth + 1 >= MAX_DEPTH || seen.has(desc.typeName)) return undefined;
  return exampleOf(desc, [], depth + 1, seen);
}

function enumExample(desc: DescEnum): string | undefined {
  return (desc.values.find((v) => !v.name.endsWith('_UNSPECIFIED')) ?? desc.values[0])?.name;
}

/** A scalar's example by the field's name; numbers in range, 64-bit integers as strings. */
function scalarExample(field: DescField, scalar: ScalarType): JsonValue {
  switch (scalar) {
    case ScalarType.BOOL:
      return false;
    case ScalarType.STRING:
      return stringExample(field.jsonName);
    case ScalarType.BYTES:
      return '';
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 0;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return '0';
    default:
      return field.name === 'limit' ? PAGE_SIZE : 0;
  }
}

/** What a string field of this name plausibly holds. */
function stringExample(name: string): string {
  const rules: Array<[RegExp, string]> = [
    [/^(id|.*Id)$/, EXAMPLE_ID],
    [/email/i, 'ada@example.com'],
    [/origins?$/i, 'https://app.example.com'],
    [/^totpSecret$/, 'JBSWY3DPEHPK3PXP'], // base32, as authenticator apps take it
    [/phone/i, '+41791234567'],
    [/password/i, 'Example-Passw0rd!'],
    [/urlTemplate$/, 'https://app.example.com/verify?code={{.Code}}'],
    [/(uri|url)s?$/i, 'https://app.example.com/callback'],
    [/^(userName|loginName|username)$/, 'ada'],
    [/^givenName$/, 'Ada'],
    [/^familyName$/, 'Lovelace'],
    [/^nickName$/, 'ada'],
    [/^displayName$/, 'Ada Lovelace'],
    [/language|locale/i, 'en'],
    [/domain/i, 'example.com'],
    [/code$/i, '123456'],
    [/key$/i, 'reader'],
    [/group$/i, 'base'],
    [/description/i, 'An example'],
    [/name$/i, 'Example'],
  ];
  return rules.find(([pattern]) => pattern.test(name))?.[1] ?? 'example';
}
