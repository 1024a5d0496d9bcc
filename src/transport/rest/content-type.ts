/**
 * Content types of transcoded REST calls: request bodies are JSON in UTF-8, not content-coded;
 * answers are JSON.
 */

export const contentTypeJson = 'application/json';

export type ContentTypeCheck = 'json' | 'unsupported' | 'charset';

/**
 * Media types whose bodies are read as JSON. ZITADEL's gateway reads every body as JSON whatever it
 * is labelled (grpc-gateway's wildcard marshaler), so `curl -d '{}'` (which labels its body a form)
 * and clients that send text/plain or no type work there, and here. The API takes bearer tokens
 * only, never cookies, so a form another site posts carries no credentials. Types that clearly name
 * another format (multipart, XML, binary) are still refused rather than misread.
 */
const JSON_TYPES = new Set([contentTypeJson, 'text/plain', 'application/x-www-form-urlencoded']);

/**
 * `application/json`, `text/plain` or `application/x-www-form-urlencoded`, optionally with
 * `charset=utf-8` (RFC 8259 §8.1: JSON text is UTF-8), or no content type at all (RFC 9110 §8.3: the
 * recipient may then examine the content).
 */
export function checkJsonContentType(header: string | undefined): ContentTypeCheck {
  if (header === undefined || header.trim() === '') return 'json';
  const [type = '', ...params] = header.split(';').map((part) => part.trim());
  if (!JSON_TYPES.has(type.toLowerCase())) return 'unsupported';
  for (const param of params) {
    const [name = '', value = ''] = param.split('=', 2).map((s) => s.trim());
    if (name.toLowerCase() === 'charset' && value.replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') return 'charset';
  }
  return 'json';
}

/**
 * Whether a Content-Encoding header leaves the body as it is: absent, empty or only `identity`.
 * REST bodies are not decoded, so anything else is refused (415, RFC 9110 §15.5.16) rather than
 * read as plain JSON.
 */
export function isIdentityEncoding(header: string | undefined): boolean {
  if (header === undefined) return true;
  return header.split(',').every((coding) => ['', 'identity'].includes(coding.trim().toLowerCase()));
}
