/**
 * google.api.http path templates: parsing and matching.
 *
 *   Template = "/" Segments [ Verb ] ;
 *   Segments = Segment { "/" Segment } ;
 *   Segment  = "*" | "**" | LITERAL | Variable ;
 *   Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *   FieldPath = IDENT { "." IDENT } ;
 *   Verb     = ":" LITERAL ;
 *
 * `{user_id}` is short for `{user_id=*}`. `*` matches one non-empty segment, `**` any number of
 * segments and may only come last. Variables capture the (percent-decoded) segments they cover.
 */

export type Segment = { kind: 'literal'; value: string } | { kind: 'single' } | { kind: 'multi' };

export interface TemplateVariable {
  /** Field path in the request message, proto names: `user_id`, `user.id`. */
  fieldPath: readonly string[];
  /** First segment index the variable covers. */
  start: number;
  /** Segment index after the variable (exclusive); for a trailing `**`, the number of segments. */
  end: number;
}

export interface PathTemplate {
  source: string;
  segments: readonly Segment[];
  variables: readonly TemplateVariable[];
  verb: string | undefined;
}

export class PathTemplateError extends Error {}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
// RFC 3986 pchar without the characters the template grammar reserves ('*', '=', ':', '{', '}', '/').
const LITERAL = /^(?:[A-Za-z0-9\-._~!$&'()+,;@]|%[0-9A-Fa-f]{2})+$/;

export function parsePathTemplate(source: string): PathTemplate {
  if (!source.startsWith('/')) throw new PathTemplateError(`path template must start with "/": ${source}`);
  let body = source.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf('/');
  const colon = body.indexOf(':', lastSlash + 1);
  if (colon !== -1 && !body.slice(colon).includes('}')) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
    if (!LITERAL.test(verb)) throw new PathTemplateError(`invalid verb in path template: ${source}`);
  }
  const segments: Segment[] = [];
  const variables: TemplateVariable[] = [];
  for (const part of splitTopLevel(body, source)) {
    if (part.startsWith('{')) {
      if (!part.endsWith('}')) throw new PathTemplateError(`unterminated variable in path template: ${source}`);
      const inner = part.slice(1, -1);
      const eq = inner.indexOf('=');
      const fieldPath = (eq === -1 ? inner : inner.slice(0, eq)).split('.');
      if (!fieldPath.every((p) => IDENT.test(p))) throw new PathTemplateError(`invalid field path in path template: ${source}`);
      if (variables.some((v) => v.fieldPath.join('.') === fieldPath.join('.'))) {
        throw new PathTemplateError(`variable ${fieldPath.join('.')} bound twice in path template: ${source}`);
      }
      const start = segments.length;
      const inside = eq === -1 ? [{ kind: 'single' } as const] : inner.slice(eq + 1).split('/').map((s) => parseSegment(s, source, false));
      segments.push(...inside);
      variables.push({ fieldPath, start, end: segments.length });
    } else {
      segments.push(parseSegment(part, source, true));
    }
  }
  const multi = segments.findIndex((s) => s.kind === 'multi');
  if (multi !== -1 && multi !== segments.length - 1) throw new PathTemplateError(`"**" must be the last segment: ${source}`);
  return { source, segments, variables, verb };
}

/** Splits at '/' outside braces. */
function splitTopLevel(body: string, source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of body) {
    if (ch === '{') {
      if (depth > 0) throw new PathTemplateError(`nested variable in path template: ${source}`);
      depth++;
    } else if (ch === '}') {
      if (depth === 0) throw new PathTemplateError(`unbalanced "}" in path template: ${source}`);
      depth--;
    }
    if (ch === '/' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (depth !== 0) throw new PathTemplateError(`unterminated variable in path template: ${source}`);
  parts.push(current);
  return parts;
}

function parseSegment(text: string, source: string, topLevel: boolean): Segment {
  if (text === '*') return { kind: 'single' };
  if (text === '**') return { kind: 'multi' };
  if (topLevel || LITERAL.test(text)) {
    if (!LITERAL.test(text)) throw new PathTemplateError(`invalid segment "${text}" in path template: ${source}`);
    return { kind: 'literal', value: text };
  }
  throw new PathTemplateError(`invalid segment "${text}" in path template: ${source}`);
}

export interface TemplateMatch {
  /** Variable values by dotted field path, percent-decoded. */
  variables: Map<string, string>;
}

/** Matches a request path (without query) against a template; undefined when it does not match. */
export function matchPathTemplate(template: PathTemplate, path: string): TemplateMatch | undefined {
  if (!path.startsWith('/')) return undefined;
  let rest = path.slice(1);
  if (template.verb !== undefined) {
    const suffix = `:${template.verb}`;
    if (!rest.endsWith(suffix)) return undefined;
    rest = rest.slice(0, -suffix.length);
  }
  const parts = rest.split('/');
  const { segments } = template;
  const last = segments[segments.length - 1];
  if (last?.kind === 'multi' ? parts.length < segments.length - 1 : parts.length !== segments.length) return undefined;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    if (segment.kind === 'multi') break;
    const part = parts[i] as string;
    if (part === '') return undefined;
    if (segment.kind === 'literal' && part !== segment.value) return undefined;
  }
  const variables = new Map<string, string>();
  for (const variable of template.variables) {
    const end = segments[variable.end - 1]?.kind === 'multi' ? parts.length : variable.end;
    const covered = parts.slice(variable.start, end);
    if (covered.some((p) => p === '' && segments[variable.start]?.kind !== 'multi')) return undefined;
    const decoded = covered.map(decodeSegment);
    if (decoded.some((p) => p === undefined)) return undefined;
    variables.set(variable.fieldPath.join('.'), decoded.join('/'));
  }
  return { variables };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // malformed percent-encoding: no match
  }
}

/**
 * Orders templates so that the more specific one is tried first: segment by segment, a literal
 * beats `*`, which beats `**`; then the longer template wins.
 */
export function compareSpecificity(a: PathTemplate, b: PathTemplate): number {
  const rank = (s: Segment | undefined): number => (s === undefined ? 0 : s.kind === 'literal' ? 3 : s.kind === 'single' ? 2 : 1);
  const length = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const diff = rank(b.segments[i]) - rank(a.segments[i]);
    if (diff !== 0) return diff;
  }
  return (b.verb === undefined ? 0 : 1) - (a.verb === undefined ? 0 : 1);
}
