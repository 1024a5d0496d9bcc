/**
 * One REST route as an OpenAPI operation, binding its parameters exactly as the transcoder does
 * (request.ts, params.ts): path variables; then the body (`*`: every field the path does not bind,
 * a named field, or none); then, unless the body is `*`, every other field the transcoder can set
 * from text as a query parameter, nested fields with dots, repeated fields by repetition.
 */
import type { DescField, DescMessage, DescMethod, JsonObject, JsonValue } from '@bufbuild/protobuf';
import { fieldExample, messageExample } from './openapi-examples.ts';
import { leafJson } from './params.ts';
import type { PathTemplate, Segment } from './path-template.ts';
import type { RestRoute } from './routes.ts';
import type { SchemaSet } from './openapi-schema.ts';

/** The HTTP methods an OpenAPI path item can hold; a custom method outside them has no operation. */
const OPENAPI_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export interface OperationContext {
  schemas: SchemaSet;
  /** The security requirements of a method, or undefined when it is served without a token. */
  security(method: DescMethod): JsonObject[] | undefined;
}

export interface RouteOperation {
  /** The OpenAPI path: `/v2/users/{user_id}`. */
  path: string;
  /** Lower case: `get`. */
  httpMethod: string;
  operation: JsonObject;
}

/** The operation of a route, or undefined when its HTTP method has no place in OpenAPI. */
export function routeOperation(route: RestRoute, operationId: string, context: OperationContext): RouteOperation | undefined {
  const httpMethod = route.httpMethod.toLowerCase();
  if (!OPENAPI_METHODS.has(httpMethod)) return undefined;
  const { method } = route;
  const { path, parameters } = pathParameters(route, context.schemas);
  parameters.push(...queryParameters(route, context.schemas));
  const operation: JsonObject = {
    operationId,
    summary: method.name,
    description: `RPC \`/${method.parent.typeName}/${method.name}\``,
    tags: [method.parent.typeName],
  };
  if (method.deprecated) operation['deprecated'] = true;
  if (parameters.length > 0) operation['parameters'] = parameters;
  const body = requestBodySchema(route, context.schemas);
  if (body !== undefined) {
    const example = requestBodyExample(route);
    operation['requestBody'] = { required: false, content: { 'application/json': { schema: body, ...(example === undefined ? {} : { example }) } } };
  }
  operation['responses'] = {
    '200': { description: 'OK', content: { 'application/json': { schema: context.schemas.ref(method.output) } } },
    default: { $ref: '#/components/responses/Error' },
  };
  const security = context.security(method);
  if (security !== undefined) operation['security'] = security;
  return { path, httpMethod, operation };
}

/** The OpenAPI path of a template and its path parameters, in order. */
function pathParameters(route: RestRoute, schemas: SchemaSet): { path: string; parameters: JsonObject[] } {
  const { template } = route;
  const parts: string[] = [];
  const parameters: JsonObject[] = [];
  for (let i = 0; i < template.segments.length; ) {
    const variable = template.variables.find((v) => v.start === i);
    if (variable !== undefined) {
      const name = variable.fieldPath.join('.');
      const leaf = route.pathFields.get(name)?.at(-1);
      const parameter: JsonObject = { name, in: 'path', required: true, schema: leaf === undefined ? { type: 'string' } : schemas.field(leaf) };
      const covered = template.segments.slice(variable.start, variable.end);
      if (covered.length !== 1 || covered[0]?.kind !== 'single') {
        parameter['description'] = `Path segments matching \`${patternOf(covered)}\`, sent with their slashes unencoded.`;
        parameter['example'] = patternOf(covered).replace(/\*\*?/g, 'example');
      } else {
        const example = leaf === undefined ? undefined : fieldExample(route.method, leaf);
        parameter['example'] = typeof example === 'string' || typeof example === 'number' || typeof example === 'boolean' ? example : 'example';
      }
      parts.push(`{${name}}`);
      parameters.push(parameter);
      i = variable.end;
      continue;
    }
    const segment = template.segments[i] as Segment;
    if (segment.kind === 'literal') {
      parts.push(segment.value);
    } else {
      // A wildcard outside a variable matches but binds no field.
      const name = `_segment${i}`;
      parts.push(`{${name}}`);
      parameters.push({ name, in: 'path', required: true, schema: { type: 'string' }, description: `Matches \`${patternOf([segment])}\`; sets no field.`, example: 'example' });
    }
    i++;
  }
  return { path: `/${parts.join('/')}${verbOf(template)}`, parameters };
}

function patternOf(segments: readonly Segment[]): string {
  return segments.map((s) => (s.kind === 'literal' ? s.value : s.kind === 'single' ? '*' : '**')).join('/');
}

function verbOf(template: PathTemplate): string {
  return template.verb === undefined ? '' : `:${template.verb}`;
}

/**
 * The query parameters: every field the path and the body leave, that a text value can set,
 * reached through singular message fields (well-known types are set whole or not at all). A message
 * nested in itself is listed down to its first repetition; the transcoder follows it deeper.
 */
function queryParameters(route: RestRoute, schemas: SchemaSet): JsonObject[] {
  if (route.body === '*') return []; // the transcoder refuses query parameters then
  const parameters: JsonObject[] = [];
  const walk = (message: DescMessage, protoPath: readonly string[], jsonPath: readonly string[], seen: ReadonlySet<string>): void => {
    for (const field of message.fields) {
      const proto = [...protoPath, field.name];
      if (protoPath.length === 0 && field.name === route.body) continue;
      if (route.pathFields.has(proto.join('.'))) continue;
      const json = [...jsonPath, field.jsonName];
      if (settableByText(field)) {
        const parameter: JsonObject = { name: json.join('.'), in: 'query', schema: schemas.field(field) };
        if (field.fieldKind === 'list') Object.assign(parameter, { style: 'form', explode: true });
        if (field.deprecated) parameter['deprecated'] = true;
        parameters.push(parameter);
      } else if (field.fieldKind === 'message' && !field.message.typeName.startsWith('google.protobuf.') && !seen.has(field.message.typeName)) {
        walk(field.message, proto, json, new Set([...seen, field.message.typeName]));
      }
    }
  };
  walk(route.method.input, [], [], new Set([route.method.input.typeName]));
  return parameters;
}

/**
 * Whether a query parameter can set the field, by the transcoder's own rule: `leafJson` refuses
 * the field types a text value cannot set. "true" is a valid text for every type it accepts.
 */
function settableByText(field: DescField): boolean {
  try {
    leafJson([field], 'true', field.name);
    return true;
  } catch {
    return false;
  }
}

/** The example of the request body (openapi-examples.ts), bound as requestBodySchema binds it. */
function requestBodyExample(route: RestRoute): JsonValue | undefined {
  const { method } = route;
  const bound = [...route.pathFields.keys()].map((name) => name.split('.'));
  if (route.body === '*') return messageExample(method, method.input, bound);
  const field = method.input.fields.find((f) => f.name === route.body);
  if (field === undefined) return undefined;
  const nested = bound.filter((path) => path[0] === field.name).map((path) => path.slice(1));
  return nested.length > 0 && field.fieldKind === 'message' ? messageExample(method, field.message, nested) : fieldExample(method, field);
}

/** The schema of the request body, or undefined when the route takes none. */
function requestBodySchema(route: RestRoute, schemas: SchemaSet): JsonObject | undefined {
  const input = route.method.input;
  const bound = [...route.pathFields.keys()].map((name) => name.split('.'));
  if (route.body === '') return undefined;
  if (route.body === '*') return bound.length === 0 ? schemas.ref(input) : schemas.message(input, bound);
  const field = input.fields.find((f) => f.name === route.body);
  if (field === undefined) return undefined; // routes.ts refuses such a rule at start
  const nested = bound.filter((path) => path[0] === field.name).map((path) => path.slice(1));
  return nested.length > 0 && field.fieldKind === 'message' ? schemas.message(field.message, nested) : schemas.field(field);
}
