/**
 * JSON Schemas (OpenAPI 3.1, JSON Schema 2020-12) of protobuf messages and enums in their proto3
 * JSON form, the form the REST transcoder reads and writes: lowerCamelCase names, 64-bit integers
 * as strings, bytes in base64, enums by value name, well-known types in their own JSON forms.
 *
 * Messages and enums become components named by their full proto type name and are referenced;
 * well-known types are written inline. Messages leave `additionalProperties` open because the
 * transcoder drops unknown fields (request.ts).
 */
import { ScalarType, type DescEnum, type DescField, type DescMessage, type JsonObject } from '@bufbuild/protobuf';

export const COMPONENT_PREFIX = '#/components/schemas/';

export class SchemaSet {
  readonly #components = new Map<string, JsonObject>();

  /** The component schemas referenced so far, by type name in order. */
  components(): JsonObject {
    return Object.fromEntries([...this.#components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** A reference to the component of a message or enum, or the inline schema of a well-known type. */
  ref(desc: DescMessage | DescEnum): JsonObject {
    const inline = desc.kind === 'message' ? wellKnownSchema(desc.typeName) : desc.typeName === 'google.protobuf.NullValue' ? { type: 'null' } : undefined;
    if (inline !== undefined) return inline;
    if (!this.#components.has(desc.typeName)) {
      this.#components.set(desc.typeName, {}); // taken before the fields are walked: messages may nest themselves
      this.#components.set(desc.typeName, desc.kind === 'enum' ? enumSchema(desc) : this.message(desc));
    }
    return { $ref: `${COMPONENT_PREFIX}${desc.typeName}` };
  }

  /**
   * The schema of a message; `excluded` lists proto field paths (`["user", "id"]`) left out, as
   * the fields a REST path binds are left out of its body.
   */
  message(desc: DescMessage, excluded: readonly (readonly string[])[] = []): JsonObject {
    const properties: JsonObject = {};
    for (const field of desc.fields) {
      const below = excluded.filter((path) => path[0] === field.name);
      if (below.some((path) => path.length === 1)) continue;
      const nested = below.map((path) => path.slice(1));
      const schema = nested.length > 0 && field.fieldKind === 'message' ? this.message(field.message, nested) : this.field(field);
      properties[field.jsonName] = field.deprecated ? { ...schema, deprecated: true } : schema;
    }
    const schema: JsonObject = { type: 'object', properties };
    const notes: string[] = [];
    const dependent: JsonObject = {};
    for (const oneof of desc.oneofs) {
      const members = oneof.fields.map((f) => f.jsonName).filter((name) => name in properties);
      if (members.length < 2) continue;
      notes.push(`At most one of ${members.map((m) => `\`${m}\``).join(', ')} may be set (oneof \`${oneof.name}\`).`);
      for (const member of members) {
        const others = members.filter((m) => m !== member).map((m): JsonObject => ({ required: [m] }));
        dependent[member] = { not: others.length === 1 ? (others[0] as JsonObject) : { anyOf: others } };
      }
    }
    if (notes.length > 0) {
      schema['description'] = notes.join(' ');
      schema['dependentSchemas'] = dependent;
    }
    return schema;
  }

  /** The schema of a field's JSON value. */
  field(field: DescField): JsonObject {
    switch (field.fieldKind) {
      case 'scalar':
        return scalarSchema(field.scalar);
      case 'enum':
        return this.ref(field.enum);
      case 'message':
        return this.ref(field.message);
      case 'list': {
        const items = field.listKind === 'scalar' ? scalarSchema(field.scalar) : field.listKind === 'enum' ? this.ref(field.enum) : this.ref(field.message);
        return { type: 'array', items };
      }
      case 'map': {
        const values = field.mapKind === 'scalar' ? scalarSchema(field.scalar) : field.mapKind === 'enum' ? this.ref(field.enum) : this.ref(field.message);
        return { type: 'object', propertyNames: mapKeySchema(field.mapKey), additionalProperties: values };
      }
    }
  }
}

/** Values of 64-bit integers are JSON strings (proto3 JSON); the parser also takes numbers. */
export function scalarSchema(scalar: ScalarType): JsonObject {
  switch (scalar) {
    case ScalarType.DOUBLE:
      return { type: 'number', format: 'double' };
    case ScalarType.FLOAT:
      return { type: 'number', format: 'float' };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: 'integer', format: 'int32' };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: 'integer', minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: 'string', format: 'int64', pattern: '^-?[0-9]+$' };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: 'string', format: 'uint64', pattern: '^[0-9]+$' };
    case ScalarType.BOOL:
      return { type: 'boolean' };
    case ScalarType.STRING:
      return { type: 'string' };
    case ScalarType.BYTES:
      return { type: 'string', contentEncoding: 'base64' };
  }
}

/** Map keys are JSON object keys: strings, holding the key's value in text. */
function mapKeySchema(key: ScalarType): JsonObject {
  if (key === ScalarType.STRING) return { type: 'string' };
  if (key === ScalarType.BOOL) return { enum: ['true', 'false'] };
  return { pattern: key === ScalarType.UINT32 || key === ScalarType.FIXED32 || key === ScalarType.UINT64 || key === ScalarType.FIXED64 ? '^[0-9]+$' : '^-?[0-9]+$' };
}

function enumSchema(desc: DescEnum): JsonObject {
  return {
    type: 'string',
    enum: desc.values.map((v) => v.name),
    description: 'Written as the value name; the number of a value is accepted too.',
  };
}

/** The proto3 JSON forms of the well-known types; undefined for any other message. */
export function wellKnownSchema(typeName: string): JsonObject | undefined {
  switch (typeName) {
    case 'google.protobuf.Timestamp':
      return { type: 'string', format: 'date-time', description: 'RFC 3339; written in UTC.' };
    case 'google.protobuf.Duration':
      return { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]{1,9})?s$', description: 'Seconds with the suffix "s", such as "1.5s".' };
    case 'google.protobuf.FieldMask':
      return { type: 'string', description: 'Field paths in lowerCamelCase, separated by commas.' };
    case 'google.protobuf.Struct':
      return { type: 'object', additionalProperties: true };
    case 'google.protobuf.Value':
      return {};
    case 'google.protobuf.ListValue':
      return { type: 'array' };
    case 'google.protobuf.Empty':
      return { type: 'object' };
    case 'google.protobuf.Any':
      return { type: 'object', required: ['@type'], properties: { '@type': { type: 'string' } }, additionalProperties: true };
    case 'google.protobuf.DoubleValue':
      return scalarSchema(ScalarType.DOUBLE);
    case 'google.protobuf.FloatValue':
      return scalarSchema(ScalarType.FLOAT);
    case 'google.protobuf.Int64Value':
      return scalarSchema(ScalarType.INT64);
    case 'google.protobuf.UInt64Value':
      return scalarSchema(ScalarType.UINT64);
    case 'google.protobuf.Int32Value':
      return scalarSchema(ScalarType.INT32);
    case 'google.protobuf.UInt32Value':
      return scalarSchema(ScalarType.UINT32);
    case 'google.protobuf.BoolValue':
      return scalarSchema(ScalarType.BOOL);
    case 'google.protobuf.StringValue':
      return scalarSchema(ScalarType.STRING);
    case 'google.protobuf.BytesValue':
      return scalarSchema(ScalarType.BYTES);
    default:
      return undefined;
  }
}
