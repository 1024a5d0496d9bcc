/**
 * connect-es answers a request body that is not valid protobuf binary with Code.Internal and the
 * parser's wording ("parse binary: premature EOF"), which is an HTTP 500 in the Connect protocol.
 * The fault is the client's (SPEC §4: bad input never gets a 500), so this rewrites exactly that
 * answer, in each protocol's encoding, to InvalidArgument with a message of ours. Parse errors
 * happen before interceptors run, so they cannot be mapped there.
 */
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';

const PARSE_BINARY = 'parse binary:';
const MESSAGE = 'request message is not valid protobuf binary';
const GRPC_INVALID_ARGUMENT = '3';
const GRPC_INTERNAL = '13';

export async function reclassifyParseError(response: UniversalServerResponse): Promise<UniversalServerResponse> {
  const type = response.header?.get('content-type') ?? '';
  if (type.startsWith('application/grpc-web')) return { ...response, body: mapTrailerFrame(response.body) };
  if (type.startsWith('application/grpc')) return { ...response, body: fixTrailerAfterBody(response.body, response.trailer) };
  if (response.status === 500 && type.startsWith('application/json') && response.body !== undefined) return connectUnary(response);
  return response;
}

/** Connect unary: the error is the JSON body of the 500 answer. */
async function connectUnary(response: UniversalServerResponse): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body ?? []) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  let error: { code?: unknown; message?: unknown } = {};
  try {
    error = JSON.parse(bytes.toString('utf8')) as typeof error;
  } catch {
    // not an error body of ours to rewrite
  }
  if (error.code !== 'internal' || typeof error.message !== 'string' || !error.message.startsWith(PARSE_BINARY)) {
    return { ...response, body: oneChunk(bytes) };
  }
  const body = Buffer.from(JSON.stringify({ code: 'invalid_argument', message: MESSAGE }));
  const header = new Headers(response.header);
  header.set('content-length', String(body.byteLength));
  return { ...response, status: 400, header, body: oneChunk(body) };
}

/** gRPC: the status is in the trailers, which connect-es sets while the body is produced. */
async function* fixTrailerAfterBody(body: AsyncIterable<Uint8Array> | undefined, trailer: Headers | undefined): AsyncIterable<Uint8Array> {
  if (body !== undefined) yield* body;
  if (trailer?.get('grpc-status') === GRPC_INTERNAL && isParseMessage(trailer.get('grpc-message'))) {
    trailer.set('grpc-status', GRPC_INVALID_ARGUMENT);
    trailer.set('grpc-message', encodeURIComponent(MESSAGE));
  }
}

/** gRPC-web: the status is a trailer frame (flag 0x80) at the end of the body. */
async function* mapTrailerFrame(body: AsyncIterable<Uint8Array> | undefined): AsyncIterable<Uint8Array> {
  for await (const chunk of body ?? []) {
    const frame = Buffer.from(chunk);
    const isWholeTrailerFrame = frame.length >= 5 && (frame[0] ?? 0) & 0x80 && frame.readUInt32BE(1) === frame.length - 5;
    const lines = isWholeTrailerFrame ? frame.subarray(5).toString('latin1').split('\r\n') : [];
    const status = lines.find((l) => l.toLowerCase().startsWith('grpc-status:'))?.split(':')[1]?.trim();
    const message = lines.find((l) => l.toLowerCase().startsWith('grpc-message:'))?.slice('grpc-message:'.length).trim();
    if (status !== GRPC_INTERNAL || !isParseMessage(message ?? null)) {
      yield chunk;
      continue;
    }
    const rest = lines.filter((l) => l !== '' && !/^grpc-(status|message):/i.test(l));
    const text = [`grpc-status: ${GRPC_INVALID_ARGUMENT}`, `grpc-message: ${encodeURIComponent(MESSAGE)}`, ...rest].map((l) => `${l}\r\n`).join('');
    const payload = Buffer.from(text, 'latin1');
    const head = Buffer.alloc(5);
    head[0] = frame[0] ?? 0x80;
    head.writeUInt32BE(payload.length, 1);
    yield Buffer.concat([head, payload]);
  }
}

function isParseMessage(encoded: string | null): boolean {
  if (encoded === null) return false;
  try {
    return decodeURIComponent(encoded).startsWith(PARSE_BINARY);
  } catch {
    return false;
  }
}

async function* oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
