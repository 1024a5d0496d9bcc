/**
 * Writes a router answer to Node. connect-node sends a gRPC error as HEADERS, then the trailers in
 * a second HEADERS frame; every error raised before the implementation yields a message
 * (authentication, a malformed frame, bad compression) is turned into a trailers-only answer
 * instead (trailers-only.ts), as gRPC over HTTP/2 requires. grpc-message is re-encoded the way the
 * protocol percent-encodes it. Everything else goes out as connect-node writes it.
 */
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import { universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { NodeResponse } from '../../http/node-types.ts';
import { isGrpcContentType, normalizeGrpcMessage, respondTrailersOnly } from './trailers-only.ts';

export async function writeResponse(response: UniversalServerResponse, res: NodeResponse): Promise<void> {
  const body = response.body?.[Symbol.asyncIterator]();
  if (!('stream' in res) || body === undefined || !isGrpcContentType(response.header?.get('content-type'))) {
    await universalResponseToNodeResponse(response, res);
    return;
  }
  // connect-es sets the trailer (grpc-status, ...) once the body ends, so wait for the first chunk.
  const first = await body.next();
  if (first.done === true) {
    const headers: Record<string, string> = {};
    response.header?.forEach((value, name) => (headers[name] = value));
    response.trailer?.forEach((value, name) => (headers[name] = value));
    const message = normalizeGrpcMessage(headers['grpc-message'] ?? null);
    if (message !== null) headers['grpc-message'] = message;
    respondTrailersOnly(res, headers);
    return;
  }
  await universalResponseToNodeResponse({ ...response, body: prepend(first.value, body, response.trailer) }, res);
}

/** The body again, first chunk included; the trailer's grpc-message is re-encoded once it is set. */
async function* prepend(first: Uint8Array, rest: AsyncIterator<Uint8Array>, trailer: Headers | undefined): AsyncIterable<Uint8Array> {
  try {
    yield first;
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
    const message = normalizeGrpcMessage(trailer?.get('grpc-message') ?? null);
    if (message !== null) trailer?.set('grpc-message', message);
  } finally {
    await rest.return?.(); // a failed write ends the implementation too
  }
}
