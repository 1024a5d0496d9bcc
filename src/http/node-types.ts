/**
 * The Node.js request and response types the listener serves on (HTTP/1.1 and HTTP/2), and the two
 * writes every protocol adapter needs: a complete response, and giving up on one.
 */
import type * as http from 'node:http';
import type * as http2 from 'node:http2';

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/** What both response types share, with one call signature each (their unions are not callable). */
interface PlainResponse {
  writeHead(status: number, headers: http.OutgoingHttpHeaders): unknown;
  end(body: string | Uint8Array): unknown;
  end(): unknown;
}

/** Writes a complete response: status, headers and an optional body. */
export function respond(res: NodeResponse, status: number, headers: http.OutgoingHttpHeaders, body?: string | Uint8Array): void {
  const plain: PlainResponse = res;
  plain.writeHead(status, headers);
  if (body === undefined) plain.end();
  else plain.end(body);
}

/** Drops the connection (HTTP/1.1) or resets the stream (HTTP/2) of a response that cannot be completed. */
export function abortResponse(res: NodeResponse): void {
  if ('stream' in res) res.stream.close();
  else res.destroy();
}

/**
 * A JSON answer of the OAuth endpoints, byte for byte what Express's `res.json` writes (no spaces,
 * UTF-8, with its length), for the endpoints the dispatcher serves without Express (server/dispatch.ts).
 * Headers set before (no-store, WWW-Authenticate, Retry-After) are kept.
 */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  respond(res, status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }, text);
}

/** OAuth responses are never cached (RFC 6749 §5.1): every token, code and error answer. */
export function forbidCaching(res: http.ServerResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}
