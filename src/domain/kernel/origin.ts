/** The origin of an http(s) URI, or undefined for anything else (custom schemes, malformed text). */
export function httpOrigin(uri: string): string | undefined {
  const url = URL.parse(uri);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') ? url.origin : undefined;
}
