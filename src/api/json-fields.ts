/**
 * Which field of a JSON request message holds a value its type does not take, named by its path
 * (`oidcRequest.responseTypes[0]`) with what the field takes (for an enum, its names), for the
 * answers of REST and Connect JSON (docs/errors.md#the-api). protobuf-es refuses such a value, but
 * names only the field's proto type and, for enums, nothing the caller could pick from.
 *
 * The walk accepts what is plainly valid by itself and lets protobuf-es confirm every refusal, on
 * the one field alone (`fromJson` of the parent message with just that key): so the walk never
 * refuses what protobuf-es would decode, even where its quick rules are stricter. Unknown keys are
 * skipped, as the API ignores them (docs/decisions.md#json-input); unknown enum names are not.
 */
import { fromJson, ScalarType, type DescEnum, type DescField, type DescMessage, type JsonObject, type JsonValue } from '@bufbuild/protobuf';

export interface InvalidField {
  /** The field's path in the request message, JSON names: `oidcRequest.responseTypes[0]`, `labels["env"]`. */
  path: string;
  /** What the field takes: `must be one of …`, `must be true or false`, `only one of a, b may be set`. */
  problem: string;
}

/**
 * protobuf-es's default recursion limit: a message nested deeper is refused for its depth (input-errors.ts),
 * and the walk, which recurses, stops there too.
 */
const MAX_DEPTH = 100;

/** The first field of `json` (a message of type `schema`) whose value protobuf-es refuses; undefined when none is found. */
export function findInvalidField(schema: DescMessage, json: JsonValue): InvalidField | undefined {
  return isObject(json) ? inMessage(schema, json, '', 0) : undefined;
}

/** The sentence for an answer: `oidcRequest.responseTypes[0]: must be one of …`. */
export function describeInvalidField({ path, problem }: InvalidField): string {
  return path === '' ? problem : `${path}: ${problem}`;
}

function inMessage(desc: DescMessage, json: JsonObject, path: string, depth: number): InvalidField | undefined {
  if (depth > MAX_DEPTH) return undefined;
  for (const oneof of desc.oneofs) {
    const set = oneof.fields.filter((f) => valueOf(json, f) !== undefined && valueOf(json, f) !== null);
    if (set.length > 1) {
      return { path, problem: `only one of ${oneof.fields.map((f) => f.jsonName).join(', ')} may be set` };
    }
  }
  for (const [key, value] of Object.entries(json)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined || value === null) continue; // unknown keys are ignored; null is the default value
    const found = inField(desc, field, key, value, join(path, field.jsonName), depth);
    if (found !== undefined) return found;
  }
  return undefined;
}

function inField(parent: DescMessage, field: DescField, key: string, value: JsonValue, path: string, depth: number): InvalidField | undefined {
  /** Whether protobuf-es refuses the parent message with only this key, set to `fieldJson`. */
  const refused = (fieldJson: JsonValue): boolean => {
    try {
      fromJson(parent, { [key]: fieldJson });
      return false;
    } catch {
      return true;
    }
  };
  switch (field.fieldKind) {
    case 'message':
      return inMessageValue(field.message, value, path, depth, () => refused(value));
    case 'scalar':
      return plainlyValid(value, field.scalar, undefined) || !refused(value) ? undefined : { path, problem: expected(field.scalar, undefined) };
    case 'enum':
      return plainlyValid(value, undefined, field.enum) || !refused(value) ? undefined : { path, problem: expected(undefined, field.enum) };
    case 'list': {
      if (!Array.isArray(value)) return refused(value) ? { path, problem: 'must be a JSON array' } : undefined;
      for (const [i, item] of value.entries()) {
        const at = `${path}[${i}]`;
        const found =
          field.listKind === 'message'
            ? inMessageValue(field.message, item, at, depth, () => refused([item]))
            : plainlyValid(item, field.scalar, field.enum) || !refused([item])
              ? undefined
              : { path: at, problem: expected(field.scalar, field.enum) };
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'map': {
      if (!isObject(value)) return refused(value) ? { path, problem: 'must be a JSON object' } : undefined;
      for (const [mapKey, item] of Object.entries(value)) {
        const at = `${path}[${/^[\w.:-]{1,64}$/.test(mapKey) ? JSON.stringify(mapKey) : '…'}]`;
        const found =
          field.mapKind === 'message'
            ? inMessageValue(field.message, item, at, depth, () => refused({ [mapKey]: item }))
            : plainlyValid(item, field.scalar, field.enum) || !refused({ [mapKey]: item })
              ? undefined
              : { path: at, problem: expected(field.scalar, field.enum) };
        if (found !== undefined) return found;
      }
      return undefined;
    }
  }
}

/** A message-typed value: a well-known type's JSON form, or an object to walk into. */
function inMessageValue(desc: DescMessage, value: JsonValue, path: string, depth: number, refused: () => boolean): InvalidField | undefined {
  if (desc.typeName === 'google.protobuf.Any') return undefined; // its types resolve through the router's registry
  if (desc.typeName.startsWith('google.protobuf.')) {
    if (value === null) return undefined;
    try {
      fromJson(desc, value);
      return undefined;
    } catch {
      return { path, problem: wellKnownForm(desc) };
    }
  }
  if (!isObject(value)) return refused() ? { path, problem: 'must be a JSON object' } : undefined;
  return inMessage(desc, value, path, depth + 1);
}

const INT32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
const UINT32 = { min: 0n, max: 2n ** 32n - 1n };
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const UINT64 = { min: 0n, max: 2n ** 64n - 1n };

function rangeOf(scalar: ScalarType): { min: bigint; max: bigint } | undefined {
  switch (scalar) {
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return INT32;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return UINT32;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return INT64;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return UINT64;
    default:
      return undefined;
  }
}

/** The quick rules: true for values valid as they stand; false sends the value to protobuf-es to decide. */
function plainlyValid(value: JsonValue, scalar: ScalarType | undefined, enumDesc: DescEnum | undefined): boolean {
  if (enumDesc !== undefined) return typeof value === 'string' && enumDesc.values.some((v) => v.name === value);
  switch (scalar) {
    case ScalarType.STRING:
      return typeof value === 'string';
    case ScalarType.BOOL:
      return typeof value === 'boolean';
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return typeof value === 'number';
    case ScalarType.BYTES:
      return typeof value === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(value);
    case undefined:
      return false;
    default: {
      const range = rangeOf(scalar)!;
      const digits = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value : '';
      if (!/^-?\d{1,20}$/.test(digits)) return false;
      const n = BigInt(digits);
      return n >= range.min && n <= range.max;
    }
  }
}

/** What a field of this type takes. */
function expected(scalar: ScalarType | undefined, enumDesc: DescEnum | undefined): string {
  if (enumDesc !== undefined) {
    // The *_UNSPECIFIED value decodes, but means "not set"; it is no choice to offer.
    const names = enumDesc.values.map((v) => v.name).filter((name) => !name.endsWith('_UNSPECIFIED'));
    return `must be one of ${names.join(', ')}`;
  }
  switch (scalar) {
    case ScalarType.STRING:
      return 'must be a string';
    case ScalarType.BOOL:
      return 'must be true or false';
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 'must be a number';
    case ScalarType.BYTES:
      return 'must be base64-encoded bytes';
    case undefined:
      return 'has an invalid value';
    default: {
      const range = rangeOf(scalar)!;
      const wide = range === INT64 || range === UINT64 ? ' (a number or a string of digits)' : '';
      return `must be an integer from ${range.min} to ${range.max}${wide}`;
    }
  }
}

/** What a well-known type's JSON form is (https://protobuf.dev/programming-guides/json/). */
function wellKnownForm(desc: DescMessage): string {
  switch (desc.typeName) {
    case 'google.protobuf.Timestamp':
      return 'must be an RFC 3339 date and time, such as "2026-01-31T12:00:00Z"';
    case 'google.protobuf.Duration':
      return 'must be a duration in seconds, such as "3600s"';
    case 'google.protobuf.FieldMask':
      return 'must be a field mask, such as "displayName,email"';
    case 'google.protobuf.Struct':
      return 'must be a JSON object';
    case 'google.protobuf.ListValue':
      return 'must be a JSON array';
    default: {
      const wrapped = desc.fields.find((f) => f.name === 'value');
      if (desc.fields.length === 1 && wrapped?.fieldKind === 'scalar') return expected(wrapped.scalar, undefined);
      return `must be a valid ${desc.typeName}`;
    }
  }
}

function valueOf(json: JsonObject, field: DescField): JsonValue | undefined {
  return json[field.jsonName] ?? json[field.name];
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function isObject(value: JsonValue): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
