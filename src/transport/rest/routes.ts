/**
 * The REST route table, read once at start-up from the `google.api.http` options of the methods
 * registered on the Connect router: no route is written by hand, and a service that is not
 * registered has no REST route. A request is tried only against the templates of its shape (first
 * segment and number of segments), in the order of specificity.
 */
import { getOption, hasOption, type DescField, type DescMessage, type DescMethod } from '@bufbuild/protobuf';
import { http } from '../../../gen/google/api/annotations_pb.js';
import type { HttpRule } from '../../../gen/google/api/http_pb.js';
import type { UnaryCall, UnaryCalls } from './invoke.ts';
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
  /** The method's implementation and the router's interceptors, which REST calls in-process (invoke.ts). */
  call: UnaryCall;
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
   * By literal first segment and number of segments, the templates a path of that shape may match,
   * most specific first: those of that shape and the open ones.
   */
  readonly #byShape = new Map<string, RestRoute[]>();
  /** Templates any path may match: with `**`, or with a variable first segment. */
  readonly #open: RestRoute[] = [];

  constructor(calls: UnaryCalls) {
    const routes: RestRoute[] = [];
    for (const call of calls.values()) {
      const method = call.spec.method;
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      for (const binding of [rule, ...rule.additionalBindings]) {
        routes.push(routeFromRule(binding, call));
      }
    }
    this.#routes = routes.sort((a, b) => compareSpecificity(a.template, b.template));
    for (const route of this.#routes) {
      const { segments } = route.template;
      if (route.firstSegment === undefined || segments.some((s) => s.kind === 'multi')) {
        this.#open.push(route);
        continue;
      }
      const key = shapeKey(route.firstSegment, segments.length);
      const same = this.#byShape.get(key);
      if (same === undefined) this.#byShape.set(key, [route]);
      else same.push(route);
    }
    if (this.#open.length > 0) {
      // Each shape's list gets the open templates too, merged in the order of specificity.
      const rank = new Map(this.#routes.map((route, i) => [route, i]));
      for (const [key, same] of this.#byShape) this.#byShape.set(key, [...same, ...this.#open].sort((a, b) => rank.get(a)! - rank.get(b)!));
    }
  }

  get routes(): readonly RestRoute[] {
    return this.#routes;
  }

  match(httpMethod: string, path: string): RouteMatch {
    const end = path.indexOf('/', 1);
    let count = 1;
    for (let i = end; i !== -1; i = path.indexOf('/', i + 1)) count++;
    const allowed: string[] = [];
    const candidates = this.#byShape.get(shapeKey(end === -1 ? path.slice(1) : path.slice(1, end), count)) ?? this.#open;
    for (const route of candidates) {
      const matched = matchPathTemplate(route.template, path);
      if (matched === undefined) continue;
      if (route.httpMethod === httpMethod) return { kind: 'found', route, variables: matched.variables };
      if (!allowed.includes(route.httpMethod)) allowed.push(route.httpMethod);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'none' };
  }
}

function shapeKey(firstSegment: string, segments: number): string {
  return `${segments}/${firstSegment}`;
}

function routeFromRule(rule: HttpRule, call: UnaryCall): RestRoute {
  const method = call.spec.method;
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
  return { httpMethod, template, body: rule.body, pathFields, method, call, firstSegment };
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
