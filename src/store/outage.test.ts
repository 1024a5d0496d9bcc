/**
 * The outage and data-exception classifiers.
 *
 * @gatehouse-vm-modules builds Errors and AggregateErrors that the classifiers' instanceof checks must
 * recognize as their own realm's
 */
import { isDatabaseUnavailable, isDataException } from './outage.ts';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

type Case = [name: string, error: unknown, expected: boolean];

describe('isDatabaseUnavailable', () => {
  it.each<Case>([
    ...['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN'].map((code): Case => [`net ${code}`, withCode(code), true]),
    ...['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300'].map((code): Case => [`SQLSTATE ${code}`, withCode(code), true]),
    ['pool timeout', new Error('timeout exceeded when trying to connect'), true],
    ['lost connection', new Error('Connection terminated unexpectedly'), true],
    ['refused, message only', new Error('connect ECONNREFUSED 127.0.0.1:5432'), true],
    ['query read timeout', new Error('Query read timeout'), true],
    ['an outage as cause', new Error('wrapped', { cause: withCode('ETIMEDOUT') }), true],
    ['an outage in an AggregateError', new AggregateError([withCode('ECONNREFUSED')]), true],
    ['a plain object from another realm', { code: '57P01', message: 'terminating connection due to administrator command' }, true],
    ['unique violation', withCode('23505', 'duplicate key value'), false],
    ['data exception', withCode('22021'), false],
    ['a bug', new TypeError('x is undefined'), false],
    ['an outage six causes deep', [1, 2, 3, 4, 5].reduce<Error>((cause) => new Error('wrapped', { cause }), withCode('ECONNRESET')), false],
    ['a string', 'ECONNREFUSED', false],
    ['null', null, false],
  ])('%s → %s', (_name, error, expected) => {
    expect(isDatabaseUnavailable(error)).toBe(expected);
  });
});

describe('isDataException', () => {
  it.each<Case>([
    ['invalid byte sequence', withCode('22021'), true],
    ['numeric out of range', withCode('22003'), true],
    ['as cause', new Error('wrapped', { cause: withCode('22P05') }), true],
    ['unique violation', withCode('23505'), false],
    ['an outage', withCode('08006'), false],
    ['not an error', { code: '22021' }, false],
  ])('%s → %s', (_name, error, expected) => {
    expect(isDataException(error)).toBe(expected);
  });
});
