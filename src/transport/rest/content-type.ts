/**
 * Content types of transcoded REST calls: request bodies must be JSON in UTF-8; answers are JSON.
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
