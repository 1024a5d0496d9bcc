/**
 * The REST route table, read once at start-up from the `google.api.http` options of the methods
 * registered on the Connect router: no route is written by hand, and a service that is not
 * registered has no REST route.
 */
import { getOption, hasOption, type DescField, type DescMessage, type DescMethod } from '@bufbuild/protobuf';
import type { UniversalHandler } from '@connectrpc/connect/protocol';
import { http } from '../../../gen/google/api/annotations_pb.js';
import type { HttpRule } from '../../../gen/google/api/http_pb.js';
import { compareSpecificity, matchPathTemplate, parsePathTemplate, type PathTemplate } from './path-template.ts';

export interface RestRoute {
  /** GET, PUT, POST, DELETE, PATCH or a custom method. */
  httpMethod: string;
  template: PathTemplate;
  /** "*" (every field not bound by the path), a top-level field bound to the body, or "" (no body). */
  body: string;
  /** Path variables: dotted proto field path to the field it sets. */
  pathFields: ReadonlyMap<string, readonly DescField[]>;
  method: DescMethod;
  /** The router's handler of the method (every protocol); REST calls it as a Connect unary call. */
  handler: UniversalHandler;
  /** The literal first path segment ("v2" of "/v2/features/instance"), or undefined when it is a variable. */
  firstSegment: string | undefined;
}

export type RouteMatch =
  | { kind: 'found'; route: RestRoute; variables: Map<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'none' };

export class RouteConfigError extends Error {}

export class RestRoutes {
  readonly #routes: RestRoute[];
  /**
   * The first path segments any route can match, so that every other request (all of OAuth and the
   * login UI pass through here first) is turned away without trying each template; undefined when a
   * route starts with a variable.
   */
  readonly #firstSegments: ReadonlySet<string> | undefined;

  constructor(handlers: readonly UniversalHandler[]) {
    const seen = new Set<string>();
    const routes: RestRoute[] = [];
    for (const handler of handlers) {
      if (seen.has(handler.requestPath)) continue;
      seen.add(handler.requestPath);
      if (!hasOption(handler.method, http)) continue;
      const rule = getOption(handler.method, http);
      for (const binding of [rule, ...rule.additionalBindings]) {
        routes.push(routeFromRule(binding, handler));
      }
    }
    this.#routes = routes.sort((a, b) => compareSpecificity(a.template, b.template));
    this.#firstSegments = routes.every((r) => r.firstSegment !== undefined) ? new Set(routes.map((r) => r.firstSegment!)) : undefined;
  }

  get routes(): readonly RestRoute[] {
    return this.#routes;
  }

  match(httpMethod: string, path: string): RouteMatch {
    if (this.#firstSegments !== undefined) {
      const end = path.indexOf('/', 1);
      if (!this.#firstSegments.has(end === -1 ? path.slice(1) : path.slice(1, end))) return { kind: 'none' };
    }
    const allowed: string[] = [];
    for (const route of this.#routes) {
      const matched = matchPathTemplate(route.template, path);
      if (matched === undefined) continue;
      if (route.httpMethod === httpMethod) return { kind: 'found', route, variables: matched.variables };
      if (!allowed.includes(route.httpMethod)) allowed.push(route.httpMethod);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'none' };
  }
}

function routeFromRule(rule: HttpRule, handler: UniversalHandler): RestRoute {
  const method = handler.method;
  const where = `${method.parent.typeName}.${method.name}`;
  if (method.methodKind !== 'unary') throw new RouteConfigError(`${where}: only unary methods can have a REST binding`);
  if (rule.responseBody !== '') throw new RouteConfigError(`${where}: response_body is not supported`);
  const pattern = rule.pattern;
  let httpMethod: string;
  let path: string;
  switch (pattern.case) {
    case 'get':
    case 'put':
    case 'post':
    case 'delete':
    case 'patch':
      httpMethod = pattern.case.toUpperCase();
      path = pattern.value;
      break;
    case 'custom':
      httpMethod = pattern.value.kind.toUpperCase();
      path = pattern.value.path;
      break;
    default:
      throw new RouteConfigError(`${where}: google.api.http without a pattern`);
  }
  const template = parsePathTemplate(path);
  const pathFields = new Map<string, readonly DescField[]>();
  for (const variable of template.variables) {
    const fields = resolveFieldPath(method.input, variable.fieldPath);
    const leaf = fields[fields.length - 1];
    if (fields.length === 0 || leaf === undefined || (leaf.fieldKind !== 'scalar' && leaf.fieldKind !== 'enum')) {
      throw new RouteConfigError(`${where}: path variable ${variable.fieldPath.join('.')} must name a singular scalar field`);
    }
    pathFields.set(variable.fieldPath.join('.'), fields);
  }
  if (rule.body !== '' && rule.body !== '*') {
    const field = method.input.fields.find((f) => f.name === rule.body);
    if (field === undefined) throw new RouteConfigError(`${where}: body field ${rule.body} does not exist`);
  }
  const first = path.split('/')[1];
  const firstSegment = first !== undefined && !first.includes('{') && !first.includes('*') ? first : undefined;
  return { httpMethod, template, body: rule.body, pathFields, method, handler, firstSegment };
}

/** Resolves a dotted proto field path (`user.id`) through singular message fields; [] when it does not exist. */
export function resolveFieldPath(message: DescMessage, path: readonly string[]): DescField[] {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === name);
    if (field === undefined) return [];
    fields.push(field);
    current = field.fieldKind === 'message' ? field.message : undefined;
  }
  return fields;
}
