/**
 * Calls a method's implementation in-process for a REST request, through the same interceptors the
 * router runs for Connect, gRPC and gRPC-web: the call keeps the caller's headers (Authorization
 * above all), its context values, and a signal that aborts when the client goes away before the
 * answer and when the call ends, so interceptors and implementations see a REST call as they see any
 * other.
 *
 * The transcoder has already built and checked the request message (request.ts), so the call skips
 * what a Connect request would add on top: encoding that message to JSON and parsing it back, a
 * second copy of the headers, stream plumbing for one message. The answer is the response message
 * or the ConnectError the call ended with (anything else is an internal error, as Connect has it).
 */
import { toJsonString, type Message, type Registry } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type ConnectRouter,
  type ConnectRouterOptions,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
} from '@connectrpc/connect';
import { invokeUnaryImplementation } from '@connectrpc/connect/protocol';
import { apiError } from '../../api/errors.ts';
import type { NodeRequest, NodeResponse } from '../../http/node-types.ts';

/** A registered unary method's implementation with the interceptors the router wraps it in. */
export interface UnaryCall {
  readonly spec: MethodImplSpec & { kind: 'unary' };
  readonly interceptors: readonly Interceptor[];
}

/** The unary implementations registered on a router, by procedure path (`/package.Service/Method`). */
export type UnaryCalls = ReadonlyMap<string, UnaryCall>;

/**
 * A Connect router that also keeps what is registered on it, so that the REST transcoder calls the
 * very implementations and interceptors the router's handlers call.
 */
export function createRecordingRouter(options: ConnectRouterOptions = {}): { router: ConnectRouter; calls: UnaryCalls } {
  const inner = createConnectRouter(options);
  const calls = new Map<string, UnaryCall>();
  const keep = (spec: MethodImplSpec, interceptors: readonly Interceptor[] | undefined) => {
    if (spec.kind !== 'unary') return;
    const path = `/${spec.method.parent.typeName}/${spec.method.name}`;
    if (!calls.has(path)) calls.set(path, { spec, interceptors: interceptors ?? options.interceptors ?? [] }); // REST takes a procedure's first registration
  };
  const router: ConnectRouter = {
    get handlers() {
      return inner.handlers;
    },
    service(service, implementation, handlerOptions) {
      for (const spec of Object.values(createServiceImplSpec(service, implementation).methods)) keep(spec, handlerOptions?.interceptors);
      inner.service(service, implementation, handlerOptions);
      return router;
    },
    rpc(method, impl, handlerOptions) {
      keep(createMethodImplSpec(method, impl), handlerOptions?.interceptors);
      inner.rpc(method, impl, handlerOptions);
      return router;
    },
  };
  return { router, calls };
}

export type InvokeResult = { error: undefined; json: string } | { error: ConnectError; headers: Record<string, string> };

// Headers of an error answer that REST passes on; the others are Connect's own.
const FORWARDED_ERROR_HEADERS = ['www-authenticate', 'retry-after'];
// Request headers that describe the REST body or transport, not the call.
const DROPPED_REQUEST_HEADERS = new Set([
  'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'accept-encoding',
  'connect-protocol-version', 'connect-timeout-ms', 'connect-content-encoding', 'connect-accept-encoding',
]);

/** The reasons the call's signals carry: built once, as an abort with no reason builds an error with a stack each time. */
const CLIENT_GONE = new ConnectError('the client closed the connection', Code.Canceled);
const CALL_ENDED = new ConnectError('the call ended', Code.Canceled);
const noTimeout = (): undefined => undefined;

export async function invokeUnary(
  call: UnaryCall,
  req: NodeRequest,
  res: NodeResponse,
  input: Message,
  contextValues: ContextValues,
  registry: Registry,
): Promise<InvokeResult> {
  const authority = 'authority' in req ? req.authority : req.headers.host;
  if (authority === undefined || authority === '') throw apiError(Code.InvalidArgument, 'REST-Host', 'request has no valid host'); // e.g. HTTP/1.0 without Host
  const scheme = 'encrypted' in req.socket && req.socket.encrypted === true ? 'https' : 'http';
  const header = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || DROPPED_REQUEST_HEADERS.has(name)) continue;
    if (typeof value === 'string') header.append(name, value);
    else for (const item of value) header.append(name, item);
  }
  header.set('content-type', 'application/json');
  // The call's signal: aborted when the client leaves before the answer, and when the call ends.
  const ending = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) ending.abort(CLIENT_GONE);
  };
  res.once('close', onClose);
  const { spec } = call;
  // What Connect's createHandlerContext builds, without its copy of the request headers, deadline
  // timer and linked controllers: a REST call has no deadline of its own and one signal.
  const context: HandlerContext = {
    service: spec.method.parent,
    method: spec.method,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: `${scheme}://${authority}/${spec.method.parent.typeName}/${spec.method.name}`,
    signal: ending.signal,
    timeoutMs: noTimeout,
    requestHeader: header,
    responseHeader: new Headers(),
    responseTrailer: new Headers(),
    values: contextValues,
  };
  try {
    const output = await invokeUnaryImplementation(spec, context, input, call.interceptors as Interceptor[]);
    return { error: undefined, json: toJsonString(spec.method.output, output, { registry }) };
  } catch (thrown) {
    const error = thrown instanceof ConnectError ? thrown : new ConnectError('internal error', Code.Internal, undefined, undefined, thrown);
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_ERROR_HEADERS) {
      const value = error.metadata.get(name);
      if (value !== null) headers[name] = value;
    }
    return { error, headers };
  } finally {
    res.off('close', onClose);
    if (!ending.signal.aborted) ending.abort(CALL_ENDED);
  }
}
