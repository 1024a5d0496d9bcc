import { Code } from '@connectrpc/connect';
import { httpStatusFromCode } from './status.ts';

describe('httpStatusFromCode (grpc-gateway mapping)', () => {
  it.each([
    [Code.Canceled, 499],
    [Code.Unknown, 500],
    [Code.InvalidArgument, 400],
    [Code.DeadlineExceeded, 504],
    [Code.NotFound, 404],
    [Code.AlreadyExists, 409],
    [Code.PermissionDenied, 403],
    [Code.ResourceExhausted, 429],
    [Code.FailedPrecondition, 400],
    [Code.Aborted, 409],
    [Code.OutOfRange, 400],
    [Code.Unimplemented, 501],
    [Code.Internal, 500],
    [Code.Unavailable, 503],
    [Code.DataLoss, 500],
    [Code.Unauthenticated, 401],
  ])('%s → %i', (code, status) => {
    expect(httpStatusFromCode(code)).toBe(status);
  });

  it('answers 500 for a code outside the table', () => {
    expect(httpStatusFromCode(99 as Code)).toBe(500);
  });
});
