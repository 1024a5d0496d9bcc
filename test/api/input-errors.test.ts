/**
 * The input error table (src/api/input-errors.ts) and its application to router answers in every
 * protocol (src/api/parse-errors.ts). The second part feeds bad input to a real connect-es router,
 * so a library upgrade that changes its wording fails here rather than leaking to clients.
 */
import { gzipSync } from 'node:zlib';
import type { JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError, createConnectRouter } from '@connectrpc/connect';
import { createAsyncIterable, readAllBytes, type UniversalHandler, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import { compressionBrotli, compressionGzip } from '@connectrpc/connect-node';
import { AppService, CreateApplicationRequestSchema, ListApplicationsRequestSchema } from '../../gen/zitadel/app/v2beta/app_service_pb.js';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { ListUsersRequestSchema } from '../../gen/zitadel/user/v2/user_service_pb.js';
import { apiError } from '../../src/api/errors.ts';
import { INPUT_ERROR_RULES, jsonInputOptions, publicInputError } from '../../src/api/input-errors.ts';
import { describeInvalidField, findInvalidField } from '../../src/api/json-fields.ts';
import { answerWithInputErrors } from '../../src/api/parse-errors.ts';

const INPUT = 'zitadel.feature.v2.SetInstanceFeaturesRequest';

describe('publicInputError', () => {
  it.each([
    [Code.Internal, 'parse binary: premature EOF', Code.InvalidArgument, 'request message is not valid protobuf binary'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: duplicate object key "a"`, Code.InvalidArgument, 'request message sets a field more than once'],
    [Code.InvalidArgument, `cannot decode field ${INPUT}.oidc_token_exchange from JSON: set multiple times`, Code.InvalidArgument, 'request message sets a field more than once'],
    [Code.InvalidArgument, `cannot decode oneof ${INPUT}.kind from JSON: oneof set multiple times by a and b`, Code.InvalidArgument, 'request message sets more than one field of a oneof'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: maximum recursion depth of 100 reached`, Code.InvalidArgument, 'request message is nested too deeply'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: Array(0)`, Code.InvalidArgument, 'request message must be a JSON object'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: null`, Code.InvalidArgument, 'request message must be a JSON object'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: "x"`, Code.InvalidArgument, 'request message must be a JSON object'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: -1.5e+21`, Code.InvalidArgument, 'request message must be a JSON object'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: Unexpected end of JSON input`, Code.InvalidArgument, 'request message is not valid JSON'],
    [Code.InvalidArgument, `cannot decode message ${INPUT} from JSON: Unexpected token 'x', "x" is not valid JSON`, Code.InvalidArgument, 'request message is not valid JSON'],
    // A nested message or well-known type with a wrong value is a field's fault, not the body's.
    [Code.InvalidArgument, 'cannot decode message zitadel.Nested from JSON: 12', Code.InvalidArgument, 'request message has a field with an invalid value'],
    [Code.InvalidArgument, 'cannot decode message google.protobuf.Timestamp from JSON: invalid RFC 3339 string', Code.InvalidArgument, 'request message has a field with an invalid value'],
    [Code.InvalidArgument, `cannot decode field ${INPUT}.oidc_token_exchange from JSON: expected boolean, got "yes"`, Code.InvalidArgument, 'request message has a field with an invalid value'],
    [Code.ResourceExhausted, 'message size is larger than configured readMaxBytes 65536', Code.ResourceExhausted, 'request message is larger than 65536 bytes'],
    [Code.ResourceExhausted, 'message size 4294967295 is larger than configured readMaxBytes 65536', Code.ResourceExhausted, 'request message is larger than 65536 bytes'],
    [Code.ResourceExhausted, 'message is larger than configured readMaxBytes 1024 after decompression', Code.ResourceExhausted, 'request message is larger than 1024 bytes'],
    [Code.Internal, 'decompression failed', Code.InvalidArgument, 'request message could not be decompressed'],
    [Code.InvalidArgument, 'decompression failed', Code.InvalidArgument, 'request message could not be decompressed'],
    [Code.Internal, 'received compressed envelope, but do not know how to decompress', Code.InvalidArgument, 'request message is flagged compressed, but the request names no encoding'],
    [Code.InvalidArgument, 'protocol error: incomplete envelope', Code.InvalidArgument, 'request body ends inside a message'],
    [Code.InvalidArgument, 'protocol error: promised 100 bytes, received 2', Code.InvalidArgument, 'request body ends inside a message'],
    [Code.InvalidArgument, 'protocol error: invalid grpc timeout value: <script>', Code.InvalidArgument, 'request timeout is not valid'],
    [Code.InvalidArgument, 'protocol error: invalid connect timeout value: abc', Code.InvalidArgument, 'request timeout is not valid'],
    [Code.Unimplemented, 'unknown compression "<x>": supported encodings are gzip,br', Code.Unimplemented, 'request compression is not supported'],
  ])('%s %j → %s %j', (code, message, expectedCode, expectedMessage) => {
    expect(publicInputError(code, message, INPUT)).toEqual({ code: expectedCode, message: expectedMessage });
  });

  it.each([
    [Code.InvalidArgument, 'unknown query parameter "superUser"'], // ours (REST)
    [Code.InvalidArgument, 'request body is not valid UTF-8'], // ours (jsonInputOptions)
    [Code.Internal, 'internal error'],
    [Code.Unauthenticated, 'parse binary: premature EOF'], // a rule applies to its codes only
    [Code.Internal, 'cannot decode message x from JSON: null'],
    [Code.Unimplemented, 'protocol error: received extra input message for unary method'],
    [Code.ResourceExhausted, 'message size is larger than configured readMaxBytes many'],
  ])('leaves %s %j as it is', (code, message) => {
    expect(publicInputError(code, message, INPUT)).toBeUndefined();
  });

  it('answers only fixed messages and digits taken from the library message', () => {
    for (const rule of INPUT_ERROR_RULES) {
      const sample = typeof rule.message === 'string' ? rule.message : rule.message({ limit: '1' });
      expect(sample).toMatch(/^[a-z][\w ,.-]*$/);
    }
  });
});

const RESPONSE_TYPES = 'OIDC_RESPONSE_TYPE_CODE, OIDC_RESPONSE_TYPE_ID_TOKEN, OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN';
const UINT64 = 'must be an integer from 0 to 18446744073709551615 (a number or a string of digits)';

describe('findInvalidField', () => {
  it.each([
    ['an unknown enum name in a list', CreateApplicationRequestSchema, { oidcRequest: { responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 'CODE'] } }, `oidcRequest.responseTypes[1]: must be one of ${RESPONSE_TYPES}`],
    ['an unknown enum name', CreateApplicationRequestSchema, { oidcRequest: { appType: 'WEB' } }, 'oidcRequest.appType: must be one of OIDC_APP_TYPE_WEB, OIDC_APP_TYPE_USER_AGENT, OIDC_APP_TYPE_NATIVE'],
    ['a string for a boolean', CreateApplicationRequestSchema, { oidcRequest: { devMode: 'yes' } }, 'oidcRequest.devMode: must be true or false'],
    ['a number for a string', CreateApplicationRequestSchema, { projectId: 42 }, 'projectId: must be a string'],
    ['a string for a list', CreateApplicationRequestSchema, { oidcRequest: { redirectUris: 'https://a.test/cb' } }, 'oidcRequest.redirectUris: must be a JSON array'],
    ['a number for a message', CreateApplicationRequestSchema, { oidcRequest: 5 }, 'oidcRequest: must be a JSON object'],
    ['a bad duration', CreateApplicationRequestSchema, { oidcRequest: { clockSkew: 'soon' } }, 'oidcRequest.clockSkew: must be a duration in seconds, such as "3600s"'],
    ['two members of a oneof', CreateApplicationRequestSchema, { oidcRequest: {}, apiRequest: {} }, 'only one of oidcRequest, apiRequest may be set'],
    ['a 90-digit offset', ListApplicationsRequestSchema, { pagination: { offset: '9'.repeat(90) } }, `pagination.offset: ${UINT64}`],
    ['a negative offset', ListApplicationsRequestSchema, { pagination: { offset: -1 } }, `pagination.offset: ${UINT64}`],
    ['a fraction for a limit', ListApplicationsRequestSchema, { pagination: { limit: 1.5 } }, 'pagination.limit: must be an integer from 0 to 4294967295'],
  ])('%s', (_name, schema, json, message) => {
    const found = findInvalidField(schema, json);
    expect(found && describeInvalidField(found)).toBe(message);
  });

  it('stops at protobuf-es\'s nesting limit rather than the call stack\'s', () => {
    let deep: JsonValue = { displayNameQuery: { displayName: 'a', method: 'NO_SUCH_METHOD' } };
    for (let i = 0; i < 50_000; i++) deep = { andQuery: { queries: [deep] } };
    expect(findInvalidField(ListUsersRequestSchema, { queries: [deep] })).toBeUndefined();
    let shallow: JsonValue = { displayNameQuery: { displayName: 'a', method: 'NO_SUCH_METHOD' } };
    for (let i = 0; i < 3; i++) shallow = { andQuery: { queries: [shallow] } };
    expect(findInvalidField(ListUsersRequestSchema, { queries: [shallow] })?.path).toBe('queries[0].andQuery.queries[0].andQuery.queries[0].andQuery.queries[0].displayNameQuery.method');
  });

  it.each([
    ['enum names, and numbers', CreateApplicationRequestSchema, { oidcRequest: { responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 2], appType: 'OIDC_APP_TYPE_NATIVE' } }],
    ['proto names as keys, unknown keys, nulls', CreateApplicationRequestSchema, { project_id: '1', oidc_request: { dev_mode: true, future: { x: 1 } }, apiRequest: null }],
    ['64-bit integers as strings and numbers, a duration', ListApplicationsRequestSchema, { pagination: { offset: '18446744073709551615', limit: 10 } }],
    ['a duration', CreateApplicationRequestSchema, { oidcRequest: { clockSkew: '1.5s' } }],
    ['a message that is no object', CreateApplicationRequestSchema, []],
  ])('accepts %s', (_name, schema, json) => {
    expect(findInvalidField(schema, json as never)).toBeUndefined();
  });
});

describe('jsonInputOptions', () => {
  it('refuses invalid UTF-8 instead of decoding it leniently', () => {
    expect(() => jsonInputOptions.textDecoder.decode(new Uint8Array([0x7b, 0xff, 0x7d]))).toThrow('request body is not valid UTF-8');
    expect(jsonInputOptions.textDecoder.decode(new TextEncoder().encode('{"ü":1}'))).toBe('{"ü":1}');
  });
});

// ---------------------------------------------------------------------------------------------
// Through a real router, in each protocol
// ---------------------------------------------------------------------------------------------

const READ_MAX_BYTES = 1024;

function setFeaturesHandler(implementation: () => object = () => ({})): UniversalHandler {
  const router = createConnectRouter({
    connect: true,
    grpc: true,
    grpcWeb: true,
    readMaxBytes: READ_MAX_BYTES,
    acceptCompression: [compressionGzip, compressionBrotli],
    jsonOptions: jsonInputOptions,
  });
  router.service(FeatureService, { setInstanceFeatures: implementation });
  const handler = router.handlers.find((h) => h.method.name === 'SetInstanceFeatures');
  if (handler === undefined) throw new Error('no SetInstanceFeatures handler');
  return handler;
}

interface Answer {
  status: number;
  code: string;
  message: string;
}

async function call(handler: UniversalHandler, contentType: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  const url = `http://localhost${handler.requestPath}`;
  const header = new Headers({ 'content-type': contentType, ...headers });
  const request = { httpVersion: '2.0', method: 'POST', url, header, body: createAsyncIterable([body]), signal: new AbortController().signal };
  const response: UniversalServerResponse = await answerWithInputErrors(handler, request);
  const bytes = Buffer.from(response.body === undefined ? new Uint8Array(0) : await readAllBytes(response.body, Number.MAX_SAFE_INTEGER));
  if (contentType.startsWith('application/grpc-web')) {
    let trailer = '';
    for (let at = 0; at + 5 <= bytes.length; at += 5 + bytes.readUInt32BE(at + 1)) {
      if (bytes[at] === 0x80) trailer = bytes.subarray(at + 5, at + 5 + bytes.readUInt32BE(at + 1)).toString('latin1');
    }
    const field = (name: string): string => decodeURIComponent(new RegExp(`^${name}: ?(.*)$`, 'm').exec(trailer)?.[1]?.trim() ?? '');
    return { status: response.status, code: field('grpc-status'), message: field('grpc-message') };
  }
  if (contentType.startsWith('application/grpc')) {
    const trailer = response.trailer ?? new Headers();
    return { status: response.status, code: trailer.get('grpc-status') ?? '', message: decodeURIComponent(trailer.get('grpc-message') ?? '') };
  }
  const json = JSON.parse(bytes.toString('utf8')) as { code: string; message: string };
  return { status: response.status, code: json.code, message: json.message };
}

function envelope(payload: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Bad JSON bodies, each with the fixed message gRPC and gRPC-web (+json) answer, and Connect's own when it says more. */
const JSON_BODIES: [string, string, Buffer, string?][] = [
  ['malformed JSON', 'request message is not valid JSON', Buffer.from('{"oidcTokenExchange": tru'), 'request body is not valid JSON: line 1, column 23'],
  ['an empty body', 'request message is not valid JSON', Buffer.alloc(0), 'request body is not valid JSON: line 1, column 1'],
  ['a missing comma', 'request message is not valid JSON', Buffer.from('{\n  "oidcTokenExchange": true\n  "x": 1\n}'), 'request body is not valid JSON: line 3, column 3'],
  ['a JSON array', 'request message must be a JSON object', Buffer.from('[]')],
  ['JSON null', 'request message must be a JSON object', Buffer.from('null')],
  ['a JSON number', 'request message must be a JSON object', Buffer.from('1e999')],
  ['a field of the wrong type', 'request message has a field with an invalid value', Buffer.from('{"oidcTokenExchange": "yes"}'), 'oidcTokenExchange: must be true or false'],
  ['a number for a boolean', 'request message has a field with an invalid value', Buffer.from('{"oidcTokenExchange": 1}'), 'oidcTokenExchange: must be true or false'],
  ['a duplicated key', 'request message sets a field more than once', Buffer.from('{"oidcTokenExchange": true, "oidcTokenExchange": false}')],
  ['a field by JSON and proto name', 'request message sets a field more than once', Buffer.from('{"oidcTokenExchange": true, "oidc_token_exchange": false}')],
  ['invalid UTF-8', 'request body is not valid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
];

describe('rewriteInputErrors: Connect unary', () => {
  const handler = setFeaturesHandler();

  it.each(JSON_BODIES)('%s is 400 invalid_argument %j', async (...[, message, body, connectMessage]) => {
    expect(await call(handler, 'application/json', body)).toEqual({ status: 400, code: 'invalid_argument', message: connectMessage ?? message });
  });

  it('an unknown field is ignored, as connect-go and ZITADEL\'s gateway do', async () => {
    expect(await call(handler, 'application/json', Buffer.from('{"superUser": true, "oidcTokenExchange": true}'))).toMatchObject({ status: 200 });
  });

  it('garbage protobuf is 400 invalid_argument', async () => {
    expect(await call(handler, 'application/proto', Buffer.from([0xff, 0xff, 0xff]))).toEqual({
      status: 400, code: 'invalid_argument', message: 'request message is not valid protobuf binary',
    });
  });

  it('an oversized body is 429 resource_exhausted in our words', async () => {
    expect(await call(handler, 'application/json', Buffer.from(JSON.stringify({ pad: 'a'.repeat(READ_MAX_BYTES) })))).toEqual({
      status: 429, code: 'resource_exhausted', message: `request message is larger than ${READ_MAX_BYTES} bytes`,
    });
  });

  it('a body that decompresses beyond the limit is refused in our words', async () => {
    const answer = await call(handler, 'application/json', gzipSync(Buffer.alloc(4 * READ_MAX_BYTES, 0x20)), { 'content-encoding': 'gzip' });
    // Under plain Node, connect-node recognizes zlib's ERR_BUFFER_TOO_LARGE (ResourceExhausted, 429);
    // inside Jest's VM realm its instanceof check fails and it answers "decompression failed".
    expect([
      { status: 429, code: 'resource_exhausted', message: `request message is larger than ${READ_MAX_BYTES} bytes` },
      { status: 400, code: 'invalid_argument', message: 'request message could not be decompressed' },
    ]).toContainEqual(answer);
  });

  it.each([
    ['gzip cut short', 'gzip', gzipSync(Buffer.from('{"oidcTokenExchange": true}')).subarray(0, 12)],
    ['not gzip', 'gzip', Buffer.from('plain text')],
    ['not brotli', 'br', Buffer.from('plain text')],
  ])('a body that does not decompress (%s) is 400 invalid_argument', async (_name, encoding, body) => {
    expect(await call(handler, 'application/json', body, { 'content-encoding': encoding })).toEqual({
      status: 400, code: 'invalid_argument', message: 'request message could not be decompressed',
    });
  });

  it('an unknown compression is unimplemented without echoing it', async () => {
    const answer = await call(handler, 'application/json', Buffer.from('{}'), { 'content-encoding': '<x>' });
    expect(answer).toMatchObject({ code: 'unimplemented', message: 'request compression is not supported' });
  });

  it('an invalid timeout is invalid_argument without echoing it', async () => {
    const answer = await call(handler, 'application/json', Buffer.from('{}'), { 'connect-timeout-ms': '<x>' });
    expect(answer).toEqual({ status: 400, code: 'invalid_argument', message: 'request timeout is not valid' });
  });

  it('leaves errors with details (ours) as they are', async () => {
    const detailed = setFeaturesHandler(() => {
      throw apiError(Code.InvalidArgument, 'TEST-Id', 'cannot decode message x from JSON: null');
    });
    expect(await call(detailed, 'application/json', Buffer.from('{}'))).toEqual({
      status: 400, code: 'invalid_argument', message: 'cannot decode message x from JSON: null',
    });
  });

  it('leaves unexpected errors as they are', async () => {
    const failing = setFeaturesHandler(() => {
      throw new ConnectError('internal error', Code.Internal);
    });
    expect(await call(failing, 'application/json', Buffer.from('{}'))).toEqual({ status: 500, code: 'internal', message: 'internal error' });
  });
});

describe('a Connect JSON body with an enum', () => {
  const received: unknown[] = [];
  const router = createConnectRouter({ connect: true, jsonOptions: jsonInputOptions });
  router.service(AppService, {
    createApplication: (request) => {
      received.push(request);
      return {};
    },
  });
  const handler = router.handlers.find((h) => h.method.name === 'CreateApplication')!;
  const body = (json: object) => Buffer.from(JSON.stringify({ projectId: '1', name: 'web', ...json }));
  beforeEach(() => (received.length = 0));

  it('refuses an unknown enum name, which protobuf-es would drop, naming the path and the names', async () => {
    expect(await call(handler, 'application/json', body({ oidcRequest: { redirectUris: ['https://a.test/cb'], responseTypes: ['CODE'] } }))).toEqual({
      status: 400,
      code: 'invalid_argument',
      message: `oidcRequest.responseTypes[0]: must be one of ${RESPONSE_TYPES}`,
    });
    expect(received).toEqual([]);
  });

  it('names the field of any other value protobuf-es refuses', async () => {
    expect(await call(handler, 'application/json', body({ oidcRequest: { clockSkew: 'soon' } }))).toEqual({
      status: 400,
      code: 'invalid_argument',
      message: 'oidcRequest.clockSkew: must be a duration in seconds, such as "3600s"',
    });
  });

  it('takes enum names and numbers, and ignores unknown fields', async () => {
    const answer = await call(handler, 'application/json', body({ oidcRequest: { responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 2], future: true } }));
    expect(answer.status).toBe(200);
    expect(received).toHaveLength(1);
  });
});

describe.each([['application/grpc'], ['application/grpc-web']])('rewriteInputErrors: %s', (contentType) => {
  const handler = setFeaturesHandler();

  it.each(JSON_BODIES)('+json with %s is InvalidArgument (3) %j', async (_name, message, body) => {
    expect(await call(handler, `${contentType}+json`, envelope(body))).toEqual({ status: 200, code: '3', message });
  });

  it.each([
    ['garbage protobuf', '3', 'request message is not valid protobuf binary', envelope(Buffer.from([0xff, 0xff, 0xff])), {}],
    ['a frame declaring 4 GiB', '8', `request message is larger than ${READ_MAX_BYTES} bytes`, Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1]), {}],
    ['a frame declaring more bytes than sent', '3', 'request body ends inside a message', Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.from([0x28, 1])]), {}],
    ['a truncated frame header', '3', 'request body ends inside a message', Buffer.from([0, 0, 0]), {}],
    ['a compressed frame without an encoding', '3', 'request message is flagged compressed, but the request names no encoding', envelope(Buffer.from([0x28, 1]), 1), {}],
    ['a gzip frame cut short', '3', 'request message could not be decompressed', envelope(gzipSync(Buffer.from([0x28, 1])).subarray(0, 12), 1), { 'grpc-encoding': 'gzip' }],
    ['an unknown encoding', '12', 'request compression is not supported', envelope(Buffer.from([0x28, 1])), { 'grpc-encoding': '<x>' }],
    ['an invalid timeout', '3', 'request timeout is not valid', envelope(Buffer.alloc(0)), { 'grpc-timeout': '<x>' }],
  ])('%s answers %s %j', async (_name, code, message, body, headers) => {
    expect(await call(handler, contentType, body, headers)).toEqual({ status: 200, code, message });
  });

  it('leaves a success as it is', async () => {
    expect(await call(handler, contentType, envelope(Buffer.from([0x28, 1])))).toEqual({ status: 200, code: '0', message: '' });
  });

  it('leaves errors with details (ours) as they are', async () => {
    const detailed = setFeaturesHandler(() => {
      throw apiError(Code.InvalidArgument, 'TEST-Id', 'cannot decode message x from JSON: null');
    });
    expect(await call(detailed, contentType, envelope(Buffer.alloc(0)))).toEqual({
      status: 200, code: '3', message: 'cannot decode message x from JSON: null',
    });
  });
});
