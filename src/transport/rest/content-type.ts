/**
 * Content types of transcoded REST calls: request bodies must be JSON in UTF-8, not content-coded;
 * answers are JSON.
 */

export const contentTypeJson = 'application/json';

export type ContentTypeCheck = 'json' | 'unsupported' | 'charset';

/** `application/json`, optionally with `charset=utf-8` (RFC 8259 §8.1: JSON text is UTF-8). */
export function checkJsonContentType(header: string | undefined): ContentTypeCheck {
  if (header === undefined) return 'unsupported';
  const [type = '', ...params] = header.split(';').map((part) => part.trim());
  if (type.toLowerCase() !== contentTypeJson) return 'unsupported';
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
