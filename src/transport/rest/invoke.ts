/**
 * Calls a router handler in-process as a Connect unary call with a JSON body: the request keeps
 * the caller's headers (Authorization above all) and abort signal, so interceptors see a REST call
 * as they see any other. A 200 answer is the response message in proto3 JSON, written once by the
 * handler's own serializer and passed on as is; a non-200 answer is the Connect error JSON, read
 * back into a ConnectError.
 */
import { Code, ConnectError, type ContextValues } from '@connectrpc/connect';
import { createAsyncIterable, readAllBytes, type UniversalHandler, type UniversalServerRequest } from '@connectrpc/connect/protocol';
import { errorFromJsonBytes } from '@connectrpc/connect/protocol-connect';
import { universalRequestFromNodeRequest } from '@connectrpc/connect-node';
import { apiError } from '../../api/errors.ts';
import type { NodeRequest, NodeResponse } from '../../http/node-types.ts';

// Request headers that describe the REST body, not the synthesized Connect request.
const DROPPED_REQUEST_HEADERS = [
  'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'accept-encoding',
  'connect-protocol-version', 'connect-timeout-ms', 'connect-content-encoding', 'connect-accept-encoding',
];
// Headers of an error answer that REST passes on; the others are Connect's own.
const FORWARDED_ERROR_HEADERS = ['www-authenticate', 'retry-after'];

const encoder = new TextEncoder();

export type InvokeResult = { error: undefined; bytes: Uint8Array } | { error: ConnectError; headers: Record<string, string> };

export async function invokeUnary(
  handler: UniversalHandler,
  req: NodeRequest,
  res: NodeResponse,
  input: string,
  contextValues: ContextValues,
): Promise<InvokeResult> {
  let origin: UniversalServerRequest;
  try {
    // A parsed body (null) keeps connect-node from reading the request stream; ours replaces it.
    origin = universalRequestFromNodeRequest(req, res, null, contextValues);
  } catch {
    throw apiError(Code.InvalidArgument, 'REST-Host', 'request has no valid host'); // e.g. HTTP/1.0 without Host
  }
  const header = new Headers(origin.header);
  for (const name of DROPPED_REQUEST_HEADERS) header.delete(name);
  header.set('content-type', 'application/json');
  const response = await handler({
    ...origin,
    method: 'POST',
    url: new URL(handler.requestPath, origin.url).toString(),
    header,
    body: createAsyncIterable([encoder.encode(input)]),
  });
  const bytes = response.body === undefined ? new Uint8Array(0) : await readAllBytes(response.body, Number.MAX_SAFE_INTEGER);
  if (response.status === 200) return { error: undefined, bytes };
  const error = errorFromJsonBytes(bytes, undefined, new ConnectError('internal error', Code.Internal));
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_ERROR_HEADERS) {
    const value = response.header?.get(name);
    if (value !== null && value !== undefined) headers[name] = value;
  }
  return { error, headers };
}
