/**
 * The REST transcoder: a protocol adapter beside Connect, gRPC and gRPC-web. A REST call is matched
 * against the routes from the `google.api.http` options, turned into a request message, and handed
 * to the method's implementation through the router's own interceptors (invoke.ts), so that
 * authentication and error normalization run exactly as for the other protocols. The answer is the
 * response message in proto3 JSON, or the grpc-gateway error body with the grpc-gateway status.
 *
 * JSON output matches ZITADEL's gateway (protojson defaults): lowerCamelCase names, enums by name,
 * 64-bit integers as strings, fields with default values omitted.
 */
import { fromJsonString, type JsonValue, type Registry } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createContextValues, type ContextValues } from '@connectrpc/connect';
import { apiError, publicError } from '../../api/errors.ts';
import { notValidJson } from '../../api/json-syntax.ts';
import type { ApiLogger } from '../../api/logger.ts';
import { BodyAbortedError, readBody } from './body.ts';
import { checkJsonContentType, contentTypeJson, isIdentityEncoding } from './content-type.ts';
import { restErrorBody } from './error-body.ts';
import { invokeUnary, type UnaryCalls } from './invoke.ts';
import { abortResponse, respond, type NodeRequest, type NodeResponse } from '../../http/node-types.ts';
import { buildRequestMessage } from './request.ts';
import { RestRoutes, type RestRoute } from './routes.ts';
import { httpStatusFromCode } from './status.ts';

export interface RestTranscoderOptions {
  /** Largest accepted request body in bytes; larger ones get 413. */
  maxBodyBytes: number;
  /** Resolves error detail types for the `details` of error bodies. */
  registry: Registry;
  log: ApiLogger;
  contextValues?: () => ContextValues;
}

export interface RestTranscoder {
  readonly routes: RestRoutes;
  /** Serves the request when its path matches a REST route (405 for another method); false otherwise. */
  handle(req: NodeRequest, res: NodeResponse): Promise<boolean>;
}

export function createRestTranscoder(calls: UnaryCalls, options: RestTranscoderOptions): RestTranscoder {
  const routes = new RestRoutes(calls);
  const utf8 = new TextDecoder('utf-8', { fatal: true });

  async function serve(req: NodeRequest, res: NodeResponse, route: RestRoute, variables: Map<string, string>, query: URLSearchParams): Promise<void> {
    let body: JsonValue | undefined;
    if (route.body !== '') {
      const read = await readBody(req, options.maxBodyBytes);
      if (read.kind === 'too-large') {
        const error = apiError(Code.ResourceExhausted, 'REST-TooLarge', `request body exceeds ${options.maxBodyBytes} bytes`);
        sendError(req, res, error, 413, {}); // the listener drains the rest of the body, then closes (docs/security.md 10.8)
        return;
      }
      if (read.bytes.byteLength > 0) body = parseJsonBody(req, read.bytes);
    }
    const message = buildRequestMessage(route, { body, query, variables });
    const contextValues = options.contextValues?.() ?? createContextValues();
    const result = await invokeUnary(route.call, req, res, message, contextValues, options.registry);
    if (result.error !== undefined) {
      sendError(req, res, result.error, undefined, result.headers);
      return;
    }
    send(req, res, 200, result.json, {});
  }

  function parseJsonBody(req: NodeRequest, bytes: Uint8Array): JsonValue {
    if (!isIdentityEncoding(req.headers['content-encoding'])) {
      throw restError(Code.InvalidArgument, 'REST-ContentEncoding', 'content encoding is not supported', 415, { 'accept-encoding': 'identity' });
    }
    const type = checkJsonContentType(req.headers['content-type']);
    if (type === 'unsupported') throw restError(Code.InvalidArgument, 'REST-ContentType', 'content type must be application/json', 415);
    if (type === 'charset') throw restError(Code.InvalidArgument, 'REST-Charset', 'request body must be UTF-8', 415);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw apiError(Code.InvalidArgument, 'REST-Utf8', 'request body is not valid UTF-8');
    }
    let json: JsonValue;
    try {
      json = JSON.parse(text) as JsonValue;
    } catch {
      throw apiError(Code.InvalidArgument, 'REST-Json', notValidJson(text));
    }
    // JSON.parse keeps the last of repeated keys; protojson (ZITADEL's gateway) and Connect refuse
    // them. protobuf-es's string reader finds them, read here as a google.protobuf.Value.
    try {
      fromJsonString(ValueSchema, text);
    } catch (error) {
      if (error instanceof Error && error.message.includes('duplicate object key')) {
        throw apiError(Code.InvalidArgument, 'REST-DuplicateKey', 'request message sets a field more than once');
      }
    }
    return json;
  }

  function sendError(req: NodeRequest, res: NodeResponse, error: ConnectError, status: number | undefined, headers: Record<string, string>): void {
    const body = JSON.stringify(restErrorBody(error, options.registry));
    send(req, res, status ?? httpStatusFromCode(error.code), body, headers);
  }

  return {
    routes,
    async handle(req, res) {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      const match = routes.match(req.method ?? '', path);
      if (match.kind === 'none') return false;
      if (match.kind === 'method-not-allowed') {
        // As ZITADEL's gateway: 405 with code Unimplemented.
        const error = apiError(Code.Unimplemented, 'REST-MethodNotAllowed', 'Method Not Allowed');
        sendError(req, res, error, 405, { allow: match.allowed.join(', ') });
        return true;
      }
      try {
        await serve(req, res, match.route, match.variables, new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
      } catch (thrown) {
        if (thrown instanceof BodyAbortedError) {
          options.log.debug({ reason: thrown.message }, 'rest request aborted');
          if (!res.headersSent) abortResponse(res);
          return true;
        }
        if (thrown instanceof RestInputError) {
          options.log.debug({ message: thrown.error.rawMessage, path }, 'rest request rejected');
          sendError(req, res, thrown.error, thrown.status, thrown.headers);
        } else if (thrown instanceof ConnectError) {
          options.log.debug({ message: thrown.rawMessage, path }, 'rest request rejected');
          sendError(req, res, thrown, undefined, {});
        } else {
          options.log.error({ err: thrown, path }, 'rest transcoding failed');
          sendError(req, res, publicError(thrown), undefined, {});
        }
      }
      return true;
    },
  };
}

/** An input error answered with an HTTP status outside the code table (413, 415). */
class RestInputError extends Error {
  readonly error: ConnectError;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(error: ConnectError, status: number, headers: Record<string, string>) {
    super(error.rawMessage);
    this.error = error;
    this.status = status;
    this.headers = headers;
  }
}

function restError(code: Code, id: string, message: string, status: number, headers: Record<string, string> = {}): RestInputError {
  return new RestInputError(apiError(code, id, message), status, headers);
}

function send(req: NodeRequest, res: NodeResponse, status: number, body: string | Uint8Array, headers: Record<string, string>): void {
  if (res.headersSent) {
    abortResponse(res);
    return;
  }
  const head = req.method === 'HEAD';
  const responseHeaders = {
    'content-type': contentTypeJson,
    'cache-control': 'no-store',
    ...(head ? {} : { 'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength) }),
    ...headers,
  };
  respond(res, status, responseHeaders, head ? undefined : body);
}
