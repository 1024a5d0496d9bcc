/**
 * gRPC "Trailers-Only" answers (gRPC over HTTP/2, PROTOCOL-HTTP2.md): a call that ends without a
 * message is one HEADERS frame carrying `:status`, `content-type`, `grpc-status`, `grpc-message`
 * and `grpc-status-details-bin`, with END_STREAM.
 *
 * Node's HTTP/2 compatibility response cannot send that: it always responds with `waitForTrailers`,
 * so `writeHead` + `end()` becomes HEADERS and then an empty DATA frame with END_STREAM, which
 * grpcio reports as "Stream removed" and grpc-go as "server closed the stream without sending
 * trailers". So the stream's own `respond` is used, with the headers the response already carries
 * (request id, HSTS).
 */
import type * as http from 'node:http';
import type * as http2 from 'node:http2';
import { respond, type NodeResponse } from '../../http/node-types.ts';

/** Sends a bodiless answer whose status travels in the headers; trailers-only on HTTP/2. */
export function respondTrailersOnly(res: NodeResponse, headers: http.OutgoingHttpHeaders): void {
  if (!('stream' in res)) {
    respond(res, 200, headers); // HTTP/1.1 (gRPC-web): the headers end the response as they are
    return;
  }
  if (res.headersSent || res.stream.destroyed) return; // answered already, or the client went away
  const all: http2.OutgoingHttpHeaders = { ...res.getHeaders(), ...headers, ':status': 200 };
  res.stream.respond(all, { endStream: true });
}

/** Whether a response content type is gRPC over HTTP/2 (not gRPC-web, whose status is in the body). */
export function isGrpcContentType(contentType: string | null | undefined): boolean {
  const type = (contentType ?? '').toLowerCase();
  return type.startsWith('application/grpc') && !type.startsWith('application/grpc-web');
}

/**
 * grpc-message as gRPC over HTTP/2 percent-encodes it: only bytes outside 0x20-0x7E, and `%`.
 * encodeURIComponent (what connect-es writes) also encodes `:` and `/`, which grpc-js and grpcio
 * show undecoded ("no such procedure%3A ...").
 */
export function encodeGrpcMessage(message: string): string {
  let encoded = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** Re-encodes a percent-encoded grpc-message the way encodeGrpcMessage does; null stays null. */
export function normalizeGrpcMessage(encoded: string | null): string | null {
  if (encoded === null) return null;
  try {
    return encodeGrpcMessage(decodeURIComponent(encoded));
  } catch {
    return encoded; // not valid percent-encoding: pass it on as it came
  }
}
