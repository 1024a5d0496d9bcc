/**
 * A response body prepared once at start (the OpenAPI document, the reference page and its
 * assets): its bytes, a gzip copy when that is smaller, and a strong ETag, so that each request
 * is a lookup and a write. GET and HEAD only; If-None-Match answers 304.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { gzipSync } from 'node:zlib';

export interface StaticBody {
  /** Hex SHA-256 prefix of the bytes: the ETag, and the version in asset links. */
  readonly hash: string;
  send(req: http.IncomingMessage, res: http.ServerResponse): void;
}

export interface StaticBodyOptions {
  contentType: string;
  cacheControl: string;
  /**
   * Cache-Control when the request names this very content, `?v=<hash>` (links from the reference
   * page do): such a URL never changes meaning, so it may be kept for a year.
   */
  versionedCacheControl?: string;
  /** Further headers sent with the body and with 304 (security headers). */
  headers?: Readonly<Record<string, string>>;
}

export function staticBody(bytes: Uint8Array, options: StaticBodyOptions): StaticBody {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const etag = `"${hash}"`;
  const gzipped = bytes.byteLength > 1024 ? gzipSync(bytes) : undefined;
  const gzip = gzipped !== undefined && gzipped.byteLength < bytes.byteLength ? gzipped : undefined;
  const shared = {
    etag,
    ...(gzip === undefined ? {} : { vary: 'Accept-Encoding' }),
    ...options.headers,
  };
  const versioned = `v=${hash}`;
  return {
    hash,
    send(req, res) {
      const query = req.url?.split('?')[1];
      const cacheControl = options.versionedCacheControl !== undefined && query === versioned ? options.versionedCacheControl : options.cacheControl;
      const common = { ...shared, 'cache-control': cacheControl };
      if (matchesETag(req.headers['if-none-match'], etag)) {
        res.writeHead(304, common).end();
        return;
      }
      const zipped = gzip !== undefined && acceptsGzip(req.headers['accept-encoding']);
      const body = zipped ? gzip : bytes;
      res.writeHead(200, {
        ...common,
        'content-type': options.contentType,
        'content-length': String(body.byteLength),
        ...(zipped ? { 'content-encoding': 'gzip' } : {}),
      });
      if (req.method === 'HEAD') res.end();
      else res.end(body);
    },
  };
}

/** RFC 9110 §13.1.2: a list of entity tags, or "*"; weak tags compare equal to strong ones here. */
function matchesETag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** Whether Accept-Encoding admits gzip (a q of 0 refuses it, RFC 9110 §12.5.3). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((entry) => {
    const [coding, ...params] = entry.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
