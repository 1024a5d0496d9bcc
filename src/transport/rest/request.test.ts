import { Code, ConnectError } from '@connectrpc/connect';
import type { Message } from '@bufbuild/protobuf';
import { AppService } from '../../../gen/zitadel/app/v2beta/app_service_pb.js';
import { FeatureService } from '../../../gen/zitadel/feature/v2/feature_service_pb.js';
import { UserService as UserServiceV2 } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import { UserService } from '../../../gen/zitadel/user/v3alpha/user_service_pb.js';
import { errorDetailOf } from '../../api/errors.ts';
import { buildRequestMessage } from './request.ts';
import { createRecordingRouter } from './invoke.ts';
import { RestRoutes } from './routes.ts';

// The routes come from the google.api.http options of the registered services; the empty
// implementations are never called here.
const recorded = createRecordingRouter();
recorded.router.service(FeatureService, {}).service(UserService, {});
const routes = new RestRoutes(recorded.calls);
// A service whose requests hold enums and nested messages, for the answers that name a field's path.
const apps = createRecordingRouter();
apps.router.service(AppService, {}).service(UserServiceV2, {});
const appRoutes = new RestRoutes(apps.calls);

function build(method: string, url: string, body?: unknown): Message & Record<string, unknown> {
  const [path = '', query = ''] = url.split('?');
  const match = path.startsWith('/v2beta/') || path === '/v2/users' ? appRoutes.match(method, path) : routes.match(method, path);
  if (match.kind !== 'found') throw new Error(`no route for ${method} ${path}`);
  return buildRequestMessage(match.route, { body: body as never, query: new URLSearchParams(query), variables: match.variables }) as never;
}

/** A ListUsers query `depth` AND queries deep around a display name query. */
function nestedQueries(depth: number, method = 'TEXT_QUERY_METHOD_EQUALS'): unknown {
  let query: unknown = { displayNameQuery: { displayName: 'a', method } };
  for (let i = 0; i < depth; i++) query = { andQuery: { queries: [query] } };
  return query;
}

function rejection(method: string, url: string, body?: unknown): string {
  try {
    build(method, url, body);
  } catch (error) {
    if (!(error instanceof ConnectError)) throw error;
    expect(error.code).toBe(Code.InvalidArgument);
    expect(errorDetailOf(error)?.id).toBe('REST-InvalidArgument');
    return error.rawMessage;
  }
  throw new Error('expected a rejection');
}

describe('RestRoutes', () => {
  it('has exactly the bindings of the registered services', () => {
    const bindings = routes.routes.map((r) => `${r.httpMethod} ${r.template.source}`).sort();
    expect(bindings).toEqual([
      'DELETE /v2/features/instance',
      'GET /v2/features/instance',
      'POST /v3alpha/users/{user_id}/email/resend',
      'POST /v3alpha/users/{user_id}/email/verify',
      'PUT /v2/features/instance',
      'PUT /v3alpha/users/{user_id}/email',
    ]);
  });

  it.each([
    ['GET', '/v2/features/instance', 'found'],
    ['HEAD', '/v2/features/instance', 'method-not-allowed'],
    ['POST', '/v2/features/instance', 'method-not-allowed'],
    ['GET', '/v3alpha/users/1/email', 'method-not-allowed'],
    ['GET', '/v2/features/organization', 'none'],
    ['POST', '/auth/v1/users/me/auth_factors/otp', 'none'],
  ])('%s %s → %s', (method, path, kind) => {
    expect(routes.match(method, path).kind).toBe(kind);
  });

  it('lists the allowed methods of a path', () => {
    expect(routes.match('PATCH', '/v2/features/instance')).toEqual({ kind: 'method-not-allowed', allowed: expect.arrayContaining(['PUT', 'DELETE', 'GET']) });
  });
});

describe('buildRequestMessage', () => {
  it.each([
    [{ oidcTokenExchange: true }, true],
    [{ oidc_token_exchange: false }, false],
    [{}, undefined],
    [undefined, undefined],
  ])('body %j sets oidcTokenExchange to %s', (body, expected) => {
    expect(build('PUT', '/v2/features/instance', body).oidcTokenExchange).toBe(expected);
  });

  it.each([
    ['?inheritance=true', true],
    ['?inheritance=false', false],
    ['', false],
  ])('query %s sets inheritance to %s', (query, expected) => {
    expect(build('GET', `/v2/features/instance${query}`).inheritance).toBe(expected);
  });

  it('takes path variables, overriding the same field in the body', () => {
    const message = build('POST', '/v3alpha/users/u%2F1/email/resend', { userId: 'other', returnCode: {} });
    expect(message.userId).toBe('u/1');
    expect(message.verification).toEqual({ case: 'returnCode', value: expect.anything() });
  });

  it('reads nested fields and optional members of a oneof', () => {
    const message = build('POST', '/v3alpha/users/7/email/resend', { sendCode: { urlTemplate: 'https://x/{{.Code}}' } });
    expect(message.verification).toEqual({ case: 'sendCode', value: expect.objectContaining({ urlTemplate: 'https://x/{{.Code}}' }) });
  });

  it.each([
    [{ foo: 1, oidcTokenExchange: true }, { oidcTokenExchange: true }],
    [{ loginDefaultOrg: { enabled: true } }, {}],
  ])('drops unknown fields of %j, as ZITADEL\'s gateway does', (body, known) => {
    expect(build('PUT', '/v2/features/instance', body)).toEqual(build('PUT', '/v2/features/instance', known));
  });

  it('drops unknown fields of nested messages', () => {
    const message = build('POST', '/v3alpha/users/7/email/resend', { sendCode: { url: 'x', urlTemplate: 'https://x/{{.Code}}' }, future: [1] });
    expect(message.verification).toEqual({ case: 'sendCode', value: expect.objectContaining({ urlTemplate: 'https://x/{{.Code}}' }) });
  });

  it.each([
    ['PUT', '/v2/features/instance', { oidcTokenExchange: 'yes' }, 'oidcTokenExchange: must be true or false'],
    [
      'POST', '/v2beta/applications', { projectId: '1', name: 'web', oidcRequest: { redirectUris: ['https://a.test/cb'], responseTypes: ['CODE'] } },
      'oidcRequest.responseTypes[0]: must be one of OIDC_RESPONSE_TYPE_CODE, OIDC_RESPONSE_TYPE_ID_TOKEN, OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN',
    ],
    ['POST', '/v2beta/applications', { projectId: '1', oidcRequest: { appType: 'web' } }, 'oidcRequest.appType: must be one of OIDC_APP_TYPE_WEB, OIDC_APP_TYPE_USER_AGENT, OIDC_APP_TYPE_NATIVE'],
    ['POST', '/v2beta/applications/search', { pagination: { offset: '9'.repeat(90) } }, 'pagination.offset: must be an integer from 0 to 18446744073709551615 (a number or a string of digits)'],
    ['POST', '/v2beta/applications/search', { sortingColumn: 'NAME' }, 'sortingColumn: must be one of APP_SORT_BY_ID, APP_SORT_BY_NAME, APP_SORT_BY_STATE, APP_SORT_BY_CREATION_DATE, APP_SORT_BY_CHANGE_DATE'],
    ['POST', '/v2beta/applications', { oidcRequest: {}, apiRequest: {} }, 'only one of oidcRequest, apiRequest may be set'],
    ['POST', '/v2/users', { queries: [nestedQueries(3, 'NOPE')] }, 'queries[0].andQuery.queries[0].andQuery.queries[0].andQuery.queries[0].displayNameQuery.method: must be one of TEXT_QUERY_METHOD_EQUALS, TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE, TEXT_QUERY_METHOD_STARTS_WITH, TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE, TEXT_QUERY_METHOD_CONTAINS, TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE, TEXT_QUERY_METHOD_ENDS_WITH, TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE'],
    ['PUT', '/v2/features/instance', [], 'request body must be a JSON object'],
    ['PUT', '/v2/features/instance', 'true', 'request body must be a JSON object'],
    ['POST', '/v3alpha/users/1/email/resend', { sendCode: {}, returnCode: {} }, 'only one of sendCode, returnCode may be set'],
    ['PUT', '/v2/features/instance?oidcTokenExchange=true', {}, 'unknown query parameter "oidcTokenExchange"'],
    ['GET', '/v2/features/instance?inheritance=yes', undefined, 'query parameter "inheritance" must be true or false'],
    ['GET', '/v2/features/instance?inheritance=true&inheritance=false', undefined, 'query parameter "inheritance" must not repeat'],
    ['GET', '/v2/features/instance?verbose=1', undefined, 'unknown query parameter "verbose"'],
  ])('%s %s %j → %s', (method, url, body, message) => {
    expect(rejection(method, url, body)).toBe(message);
  });

  it('refuses a filter tree deeper than protobuf-es\'s limit before the call stack runs out', () => {
    expect(rejection('POST', '/v2/users', { queries: [nestedQueries(50_000)] })).toBe('request message is nested too deeply');
    expect(build('POST', '/v2/users', { queries: [nestedQueries(20)] })).toMatchObject({ queries: [expect.any(Object)] });
  });
});
