/**
 * Error normalization: what a client sees when an implementation throws something unexpected.
 *
 * @gatehouse-vm-modules builds Errors and AggregateErrors that the project's instanceof checks must
 * recognize as its own realm's
 */
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { ErrorDetailSchema } from '../../gen/zitadel/message_pb.js';
import { apiError, errorDetailOf, errorInterceptor, publicError } from '../../src/api/errors.ts';
import type { ApiLogger } from '../../src/api/logger.ts';
import { isDatabaseUnavailable as isUnavailable } from '../../src/store/outage.ts';

function recordingLogger(): ApiLogger & { entries: { level: string; obj: object; msg: string | undefined }[] } {
  const entries: { level: string; obj: object; msg: string | undefined }[] = [];
  const at = (level: string) => (obj: object, msg?: string): void => void entries.push({ level, obj, msg });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function callThrowing(thrown: unknown, log: ApiLogger): Promise<ConnectError> {
  const transport = createRouterTransport(
    (router) => {
      router.service(FeatureService, {
        getInstanceFeatures() {
          throw thrown;
        },
      });
    },
    { router: { interceptors: [errorInterceptor(log)] } },
  );
  try {
    await createClient(FeatureService, transport).getInstanceFeatures({});
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error('expected the call to fail');
}

describe('errorInterceptor', () => {
  it('turns an unexpected exception into a static Internal and logs the original', async () => {
    const log = recordingLogger();
    const cause = new Error('relation "secret_table" does not exist');
    const error = await callThrowing(cause, log);
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).toBe('internal error');
    expect(error.findDetails(ErrorDetailSchema)).toEqual([expect.objectContaining({ id: 'API-Internal', message: 'internal error' })]);
    expect(JSON.stringify(error.findDetails(ErrorDetailSchema))).not.toContain('secret_table');
    expect(log.entries).toEqual([{ level: 'error', obj: expect.objectContaining({ err: cause }), msg: 'api call failed unexpectedly' }]);
  });

  it('answers Unavailable when the database cannot be reached', async () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const error = await callThrowing(cause, recordingLogger());
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toBe('service temporarily unavailable');
  });

  it('passes domain errors through and logs them at debug level', async () => {
    const log = recordingLogger();
    const error = await callThrowing(apiError(Code.NotFound, 'TEST-NotFound', 'no such thing'), log);
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe('no such thing');
    expect(errorDetailOf(error)).toMatchObject({ id: 'TEST-NotFound', message: 'no such thing' });
    expect(log.entries.map((e) => e.level)).toEqual(['debug']);
  });
});

describe('isUnavailable', () => {
  it.each([
    [Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), true],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }), true],
    [new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), true],
    [Object.assign(new Error('duplicate key value'), { code: '23505' }), false],
    [new TypeError('x is undefined'), false],
    ['a string', false],
  ])('%s → %s', (error, expected) => {
    expect(isUnavailable(error)).toBe(expected);
    expect(publicError(error).code).toBe(expected ? Code.Unavailable : Code.Internal);
  });
});
