/**
 * The API entry point for the server: one handler for the four protocols of the API services
 * (src/api/services.ts lists them).
 *
 * - `/<package.Service>/<Method>`: Connect (JSON and binary), gRPC and gRPC-web, through the Connect
 *   router. Procedures of services not registered answer Unimplemented in the caller's protocol.
 *   Beside the API: grpc.health.v1.Health and server reflection, without authentication.
 *   gRPC errors without a message go out trailers-only (src/transport/rpc/write-response.ts).
 * - REST paths from the `google.api.http` options of the registered methods, through the transcoder
 *   (src/transport/rest/), which calls the same implementations through the same interceptors.
 *
 * `handle` resolves to false when the request is none of these, and the caller passes it on
 * (to Express for HTTP/1.1; for HTTP/2 the caller answers 404 itself).
 *
 * JSON input (Connect and REST) ignores unknown fields, as ZITADEL's gateway and connect-go do, so
 * clients built against newer ZITADEL protos keep working (docs/decisions.md#json-input); binary
 * protobuf ignores them as the wire format requires.
 *
 * Streaming calls served without a token (health Watch, reflection) are capped per client address
 * and in total (src/api/stream-limits.ts); every call carries its client address key for that.
 *
 * Input the libraries refuse before interceptors run (malformed JSON, oversized or undecompressable
 * bodies, ...) is answered with our codes and messages: see src/api/input-errors.ts and parse-errors.ts.
 */
import { createRegistry } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextValues } from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerRequest } from '@connectrpc/connect/protocol';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
} from '@connectrpc/connect-node';
import { file_zitadel_message } from '../../gen/zitadel/message_pb.js';
import { authInterceptor } from '../api/auth-interceptor.ts';
import { errorInterceptor } from '../api/errors.ts';
import { jsonInputOptions } from '../api/input-errors.ts';
import { silentLogger, type ApiLogger } from '../api/logger.ts';
import { answerWithInputErrors } from '../api/parse-errors.ts';
import { createServingProbe } from '../api/serving-probe.ts';
import { PUBLIC_SERVICES, registerServices } from '../api/services.ts';
import { clientKey, createStreamGate, STREAM_LIMITS, streamLimitInterceptor, type StreamLimits } from '../api/stream-limits.ts';
import type { TrustedProxies } from '../config/ip-addresses.ts';
import type { Gatehouse } from '../context.ts';
import type { Principal } from '../domain/kernel/principal.ts';
import { withFailureBudget } from '../domain/sign-in/secret-tries.ts';
import { limitKeyOf } from '../http/client-address.ts';
import { abortResponse, respond, type NodeRequest, type NodeResponse } from '../http/node-types.ts';
import { reachable, type DB } from '../store/database.ts';
import { createRecordingRouter } from '../transport/rest/invoke.ts';
import type { RestRoutes } from '../transport/rest/routes.ts';
import { createRestTranscoder } from '../transport/rest/transcoder.ts';
import { answerUnimplemented, isRpcRequest } from '../transport/rpc/unimplemented.ts';
import { writeResponse } from '../transport/rpc/write-response.ts';

export interface ApiDeps {
  db: DB;
  /** The id of the instance this deployment serves. */
  instanceId: () => string;
  /** `<service>` of the reserved API audience scope (GATEHOUSE_SERVICE_NAME). */
  serviceName: string;
  /** The audience that scope adds to tokens, which every call's token must carry (docs/security.md 10.5). */
  apiAudience: string;
  /** Largest accepted request message or REST body, in bytes (GATEHOUSE_MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /**
   * Resolves a bearer token to its principal. Rejects for invalid, expired or revoked tokens
   * (answered 401); a rejection with a ConnectError is answered with that error as is, and one
   * that looks like an unreachable database with 503.
   */
  authenticate(token: string): Promise<Principal>;
  /** GATEHOUSE_GRPC_REFLECTION: serve gRPC server reflection; default true, as the config's. */
  grpcReflection?: boolean;
  /** Called after a change this process made (feature flags), so that its caches refresh at once. */
  changed?: () => void;
  /** GATEHOUSE_TRUSTED_PROXIES: whose X-Forwarded-For names the client the per-address caps count. Default none. */
  trustedProxies?: TrustedProxies;
  /** The caps on unauthenticated streams; the server uses STREAM_LIMITS, tests pass smaller ones. */
  streams?: Partial<StreamLimits>;
  log?: ApiLogger;
}

export interface ApiHandler {
  /** Serves an API request; resolves to false when the request is not for the API. */
  handle(req: NodeRequest, res: NodeResponse): Promise<boolean>;
  /** The REST routes the transcoder serves (what /openapi.json describes). */
  readonly restRoutes: RestRoutes;
  /** The server stops: health reports NOT_SERVING and its watches end (SIGTERM, docs/operations.md#signals). */
  shutDown(): void;
}

/**
 * `gh`, the running server's context, is what the services that need more than ApiDeps carries are
 * built from (src/api/services.ts); without it (test/api) the API serves the others alone.
 */
export function createApiHandler(deps: ApiDeps, gh?: Gatehouse): ApiHandler {
  const log = deps.log ?? silentLogger;
  const streams: StreamLimits = { ...STREAM_LIMITS, ...deps.streams };
  const trustedProxies: TrustedProxies = deps.trustedProxies ?? new Set();
  // Resolves the message types of google.protobuf.Any fields, in JSON requests and answers alike.
  const registry = createRegistry(file_zitadel_message);
  const { router, calls } = createRecordingRouter({
    connect: true,
    grpc: true,
    grpcWeb: true,
    readMaxBytes: deps.maxBodyBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
    jsonOptions: { ...jsonInputOptions, registry },
    // Outermost first: errors are normalized after authentication and the implementation ran.
    interceptors: [
      errorInterceptor(log),
      streamLimitInterceptor(createStreamGate(streams), PUBLIC_SERVICES),
      authInterceptor({
        authenticate: deps.authenticate,
        instanceId: deps.instanceId,
        serviceName: deps.serviceName,
        apiAudience: deps.apiAudience,
        publicServices: PUBLIC_SERVICES,
        log,
      }),
    ],
  });
  const probe = createServingProbe(() => reachable(deps.db));
  const reflection = deps.grpcReflection ?? true;
  registerServices(router, gh, {
    db: deps.db,
    instanceId: deps.instanceId,
    changed: deps.changed,
    probe,
    reflection,
    watchMaxAgeMs: streams.watchMaxAgeMs,
  });

  const procedures = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));
  const rest = createRestTranscoder(calls, {
    maxBodyBytes: deps.maxBodyBytes,
    registry,
    log,
  });

  /**
   * Runs a call with the caller's address as the one its secret checks count against (a current
   * password, a reset, email or passkey link code: domain/secret-tries.ts).
   */
  function withCallerBudget<T>(req: NodeRequest, work: () => Promise<T>): Promise<T> {
    if (gh === undefined) return work();
    return withFailureBudget({ throttle: gh.throttle, address: limitKeyOf(req, gh.config.trustedProxies) }, work);
  }

  async function serveProcedure(handler: UniversalHandler, req: NodeRequest, res: NodeResponse): Promise<void> {
    let request: UniversalServerRequest;
    try {
      const values = createContextValues().set(clientKey, limitKeyOf(req, trustedProxies));
      request = universalRequestFromNodeRequest(req, res, undefined, values);
    } catch {
      respond(res, 400, {}); // no usable authority (HTTP/1.0 without Host)
      return;
    }
    try {
      await writeResponse(await answerWithInputErrors(handler, request), res);
    } catch (error) {
      if (ConnectError.from(error).code === Code.Aborted) return; // the client went away
      log.error({ err: error, procedure: handler.requestPath }, 'api response failed');
      if (!res.headersSent) respond(res, 500, {});
      else abortResponse(res);
    }
  }

  return {
    restRoutes: rest.routes,
    shutDown: () => probe.shutDown(),
    async handle(req, res) {
      const path = (req.url ?? '').split('?', 1)[0] ?? '';
      const procedure = procedures.get(path);
      if (procedure !== undefined) {
        await withCallerBudget(req, () => serveProcedure(procedure, req, res));
        return true;
      }
      if (await withCallerBudget(req, () => rest.handle(req, res))) return true;
      if (isRpcRequest(req, path)) {
        answerUnimplemented(req, res, path);
        return true;
      }
      return false;
    },
  };
}
