/**
 * gRPC code → HTTP status for transcoded REST calls: grpc-gateway's mapping (runtime.HTTPStatusFromCode),
 * which is what ZITADEL's REST gateway answers (docs/errors.md#the-api).
 */
import { Code } from '@connectrpc/connect';

const STATUS: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499, // client closed request
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400, // grpc-gateway: 400, deliberately not 412
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusFromCode(code: Code): number {
  return STATUS[code] ?? 500;
}
