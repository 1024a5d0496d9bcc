/**
 * Applies the input error table (input-errors.ts) to a router answer, in each protocol's encoding:
 * the Connect unary error JSON (with the HTTP status of the new code), the gRPC trailers and the
 * gRPC-web trailer frame. Input errors happen before interceptors run, so they cannot be mapped
 * there. Only errors without details are candidates: ours always carry an ErrorDetail, the
 * libraries' never do. Connect streaming is left alone (no API method streams).
 */
import { Code } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { codeFromString, codeToHttpStatus, codeToString } from '@connectrpc/connect/protocol-connect';
import { jsonInputCalls, publicInputError, type JsonInputCall } from './input-errors.ts';

/**
 * Serves one call through the router's handler with input errors in our words. A Connect call with
 * a JSON body is refused naming the line and column of a syntax error, or the path of the field
 * whose value does not fit and what it takes (input-errors.ts `JsonInputCall`).
 */
export async function answerWithInputErrors(handler: UniversalHandler, request: UniversalServerRequest): Promise<UniversalServerResponse> {
  const call: JsonInputCall = { schema: handler.method.input };
  const response = await jsonInputCalls.run(call, () => handler(request));
  return rewriteInputErrors(response, handler.method.input.typeName, call);
}

/** `inputType`: the type name of the method's input message; `call`: its JSON input, when it was read as JSON. */
export async function rewriteInputErrors(response: UniversalServerResponse, inputType: string, call?: JsonInputCall): Promise<UniversalServerResponse> {
  const type = response.header?.get('content-type') ?? '';
  if (type.startsWith('application/grpc-web')) return { ...response, body: mapTrailerFrame(response.body, inputType) };
  if (type.startsWith('application/grpc')) return { ...response, body: fixTrailerAfterBody(response.body, response.trailer, inputType) };
  if (response.status !== 200 && type.startsWith('application/json') && response.body !== undefined && !response.header?.has('content-encoding')) {
    return connectUnary(response, inputType, call);
  }
  return response;
}

/** Connect unary: the error is the JSON body of a non-200 answer. */
async function connectUnary(response: UniversalServerResponse, inputType: string, call: JsonInputCall | undefined): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body ?? []) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  let error: { code?: unknown; message?: unknown; details?: unknown } = {};
  try {
    error = JSON.parse(bytes.toString('utf8')) as typeof error;
  } catch {
    // not an error body to rewrite
  }
  const code = typeof error.code === 'string' ? codeFromString(error.code) : undefined;
  const mapped =
    code !== undefined && typeof error.message === 'string' && error.details === undefined
      ? publicInputError(code, error.message, inputType, call)
      : undefined;
  if (mapped === undefined) return { ...response, body: oneChunk(bytes) };
  const body = Buffer.from(JSON.stringify({ code: codeToString(mapped.code), message: mapped.message }));
  const header = new Headers(response.header);
  header.set('content-length', String(body.byteLength));
  return { ...response, status: codeToHttpStatus(mapped.code), header, body: oneChunk(body) };
}

/** gRPC: the status is in the trailers, which connect-es sets while the body is produced. */
async function* fixTrailerAfterBody(
  body: AsyncIterable<Uint8Array> | undefined,
  trailer: Headers | undefined,
  inputType: string,
): AsyncIterable<Uint8Array> {
  if (body !== undefined) yield* body;
  if (trailer === undefined || trailer.has('grpc-status-details-bin')) return;
  const mapped = mapStatus(trailer.get('grpc-status'), trailer.get('grpc-message'), inputType);
  if (mapped === undefined) return;
  trailer.set('grpc-status', mapped.status);
  trailer.set('grpc-message', mapped.message);
}

/** gRPC-web: the status is an uncompressed trailer frame (flag 0x80) at the end of the body. */
async function* mapTrailerFrame(body: AsyncIterable<Uint8Array> | undefined, inputType: string): AsyncIterable<Uint8Array> {
  for await (const chunk of body ?? []) {
    const frame = Buffer.from(chunk);
    const isWholeTrailerFrame = frame.length >= 5 && frame[0] === 0x80 && frame.readUInt32BE(1) === frame.length - 5;
    const lines = isWholeTrailerFrame ? frame.subarray(5).toString('latin1').split('\r\n').filter((l) => l !== '') : [];
    const field = (name: string): string | null => {
      const line = lines.find((l) => l.toLowerCase().startsWith(`${name}:`));
      return line === undefined ? null : line.slice(name.length + 1).trim();
    };
    const mapped = field('grpc-status-details-bin') === null ? mapStatus(field('grpc-status'), field('grpc-message'), inputType) : undefined;
    if (mapped === undefined) {
      yield chunk;
      continue;
    }
    const rest = lines.filter((l) => !/^grpc-(status|message):/i.test(l));
    const text = [`grpc-status: ${mapped.status}`, `grpc-message: ${mapped.message}`, ...rest].map((l) => `${l}\r\n`).join('');
    const payload = Buffer.from(text, 'latin1');
    const head = Buffer.alloc(5);
    head[0] = 0x80;
    head.writeUInt32BE(payload.length, 1);
    yield Buffer.concat([head, payload]);
  }
}

/** A gRPC status and percent-encoded message, mapped by the table; undefined when it stays. */
function mapStatus(status: string | null, encodedMessage: string | null, inputType: string): { status: string; message: string } | undefined {
  if (status === null || !/^\d+$/.test(status) || Number(status) === 0) return undefined;
  let message: string;
  try {
    message = decodeURIComponent(encodedMessage ?? '');
  } catch {
    return undefined;
  }
  const mapped = publicInputError(Number(status) as Code, message, inputType);
  return mapped === undefined ? undefined : { status: String(mapped.code), message: encodeURIComponent(mapped.message) };
}

async function* oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
