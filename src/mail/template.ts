/**
 * URL templates of verification links (docs/decisions.md#email-codes), in the subset of Go template
 * syntax that ZITADEL documents: `{{.UserID}}`, `{{.Code}}` and `{{.OrgID}}`, with optional spaces
 * inside the braces (`{{ .Code }}`). Anything else in an action — other fields, functions,
 * pipelines, trim markers, comments — and unbalanced `{{` / `}}` are refused with a TemplateError
 * (the API answers InvalidArgument), so a template is never more than text with three holes.
 *
 * Values are substituted URL-encoded (encodeURIComponent), so a value can never add a query
 * parameter, a fragment, a path segment or a host; the template itself must begin with `http://` or
 * `https://` and render to an absolute http(s) URL with a host.
 */

export const TEMPLATE_FIELDS = ['UserID', 'Code', 'OrgID'] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];
export type TemplateValues = Readonly<Record<TemplateField, string>>;

/** Longest accepted template, in characters. */
export const MAX_TEMPLATE_LENGTH = 2048;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

type Part = { text: string } | { field: TemplateField };

const ACTION = /^ *\.(UserID|Code|OrgID) *$/;
// C0 controls, DEL and C1 controls: never part of a link, and CR/LF would reach the mail body.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Parses a template; throws TemplateError when it is not one this module renders. */
export function parseUrlTemplate(template: string): readonly Part[] {
  if (template.length === 0) throw new TemplateError('url template is empty');
  if (template.length > MAX_TEMPLATE_LENGTH) throw new TemplateError(`url template is longer than ${MAX_TEMPLATE_LENGTH} characters`);
  if (CONTROL.test(template)) throw new TemplateError('url template contains control characters');
  if (!/^https?:\/\//i.test(template)) throw new TemplateError('url template must start with http:// or https://');
  const parts: Part[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{{');
    const text = open === -1 ? rest : rest.slice(0, open);
    if (text.includes('}}')) throw new TemplateError('unbalanced "}}" in url template');
    if (text.length > 0) parts.push({ text });
    if (open === -1) break;
    const close = rest.indexOf('}}', open + 2);
    if (close === -1) throw new TemplateError('unclosed "{{" in url template');
    const action = rest.slice(open + 2, close);
    const match = ACTION.exec(action);
    if (match === null) {
      throw new TemplateError(`unsupported action {{${action}}} in url template: only {{.UserID}}, {{.Code}} and {{.OrgID}} are allowed`);
    }
    parts.push({ field: match[1] as TemplateField });
    rest = rest.slice(close + 2);
  }
  return parts;
}

/**
 * Renders a template with URL-encoded values; throws TemplateError for an invalid template or a
 * result that is not an absolute http(s) URL.
 */
export function renderUrlTemplate(template: string, values: TemplateValues): string {
  const rendered = parseUrlTemplate(template)
    .map((part) => ('text' in part ? part.text : encodeURIComponent(values[part.field])))
    .join('');
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    throw new TemplateError('url template does not render to an absolute URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new TemplateError('url template must render to an http(s) URL with a host');
  }
  if (url.username !== '' || url.password !== '') throw new TemplateError('url template must not carry credentials');
  return rendered;
}
